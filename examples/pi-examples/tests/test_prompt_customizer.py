"""prompt_customizer: a <tool_guidance> section follows the active tools (and skills) of each run."""

from __future__ import annotations

from pi_core.testing.fake_script import Reply

READ = "- Use `read` for file contents; it supports text and images.\n" \
       "- For large files, use `offset` and `limit` to read in chunks."


def test_guidance_lists_the_default_tools(example) -> None:
    example.server.add(Reply(text="ok"))
    assert example.run("prompt_customizer", "--no-session", "-p", "hi").returncode == 0
    prompt = example.system_prompt(0)
    assert prompt.endswith(
        f"\n\n<tool_guidance>\n{READ}\n"
        "- Use `bash` for file operations such as `ls`, `find`, and `grep`.\n"
        "- Use `edit` for precise text replacements that match existing content exactly.\n"
        "- Use `write` to create new files or replace existing files completely.\n</tool_guidance>")


def test_guidance_follows_the_tool_selection_and_skills(example) -> None:
    skill = example.cwd / ".pi" / "skills" / "deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: Ship the app.\n---\nSteps.\n")
    example.server.add(Reply(text="ok"), Reply(text="ok"))
    assert example.run("prompt_customizer", "--no-session", "--tools", "read", "-a", "-p", "hi").returncode == 0
    assert example.system_prompt(0).endswith(
        f"\n\n<tool_guidance>\n{READ}\n- Available skills: deploy.\n</tool_guidance>")
    assert example.run("prompt_customizer", "--no-session", "--no-tools", "-na", "-p", "hi").returncode == 0
    assert "<tool_guidance>" not in example.system_prompt(1)
