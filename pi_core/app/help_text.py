"""The text of ``pi --help``: usage, the commands, pi's options, examples and the environment variables.

A plain string, so ``pi --help`` prints it without loading a plugin; the plugins' own flags are appended
from the cache the last run wrote (``flags.help_section``). tests/cli/test_help_text.py checks that every
command and every provider variable pi knows is named here.
"""

HELP = """\
pi - a minimal, hackable coding agent; every tool and provider is a plugin

Usage:
  pi [options] [--] [@files...] [messages...]
  pi [options] <command> [command options]

Commands:
  pi install <pkg> [-l] [-e]     pip-install a plugin package into pi's environment (-l: this project)
  pi remove <pkg> [-l]           Uninstall a plugin package (alias: pi uninstall)
  pi update [pkg...] [--models]  Upgrade plugin packages, or refresh the model catalog
  pi list [--json]               Installed plugin packages and what they add
  pi plugins [--json]            Every plugin: origin, tools, providers, modes and overrides
  pi tools [--json]              Registered tools, their plugin, and which are active by default
  pi config [-l]                 Switch plugins on or off, globally or for this project (Tab switches)
  pi auth <command>              Log in or out, print credentials, check a provider (login, logout,
                                 print-api-key, print-bearer-token, check)
  pi mcp <command>               MCP servers in mcp.json (add, remove, list, login, logout)
  pi batch <tasks.jsonl> -o DIR  Run one session per task line, here or on a Ray cluster
  pi acp [options]               Serve the Agent Client Protocol on stdio, for editors such as Zed
  pi <command> --help            Help for one command
  Options before a command choose the plugins it sees (pi -e ./pack.py tools); plugins may add commands.

Options:
  -p, --print                    Answer the prompt and exit (no interactive UI)
  --mode <text|json|rpc|NAME>    Output mode: text (default), json (one event per line), rpc (stdin/stdout
                                 protocol), acp, or a mode a plugin adds
  --provider <name>              Provider to search for --model (requires --model)
  --model <pattern>              Model id or pattern; provider/id and a :<thinking> suffix are accepted
  --api-key <key>                API key for the selected model's provider (not saved; pi hides it from
                                 the process list, but an environment variable such as ANTHROPIC_API_KEY
                                 is safer: shell history and other tools see command lines)
  --thinking <level>             off, minimal, low, medium, high, xhigh, max (xhigh and max only
                                 for models that support them)
  --models <patterns>            Comma-separated models to start with and cycle through (Ctrl+P);
                                 globs (anthropic/*, *sonnet*) and :<thinking> suffixes accepted
  --list-models [search]         List models that have credentials
  -c, --continue                 Continue the most recent session in this directory
  -r, --resume                   Pick a session to resume
  --session <path|id>            Open a session file or id prefix
  --session-id <id>              Open this directory's session with this exact id, or create it
  --fork <path|id>               Fork a session into a new one
  --session-dir <dir>            Where sessions are stored and looked up
  --no-session                   Keep the session in memory only
  -n, --name <name>              Set the session's display name
  -t, --tools <a,b>              Only these tools, e.g. read,grep; * patterns; mcp__ entries filter MCP
                                 tools too; only +name/-name entries change the default selection
  -nt, --no-tools                No tools at all (unless --tools is given)
  -nbt, --no-builtin-tools       Start with no built-in tool active; plugin tools stay
  -xt, --exclude-tools <a,b>     Remove these tools (names or * patterns, MCP tools included)
  -e, --extension <file.py>      Load a plugin file for this run (repeatable; plugin:NAME enables an
                                 opt-in plugin)
  -ne, --no-extensions           Skip plugin discovery (-e files still load)
  --disable-plugin <name>        Do not load this plugin (repeatable)
  --no-mcp                       No MCP servers, MCP tools or /mcp this run
  --sandbox <mode>               Confine the model's commands and file tools: off, read-only,
                                 workspace-write (docs/sandbox.md; setting sandbox.mode)
  --skill <path>                 Load a skill file or directory (repeatable)
  -ns, --no-skills               Skip skill discovery
  --prompt-template <path>       Load a prompt template file or directory (repeatable)
  -np, --no-prompt-templates     Skip prompt template discovery
  --theme <path>                 Load a theme file or directory (repeatable)
  --use-theme <name[/name]>      The interactive theme for this run (light/dark: by terminal)
  --tui-mode <mode>              TUI mode: fullscreen (default) or regular (setting tuiMode)
  --no-themes                    Skip discovered and configured themes (--theme paths still load)
  -nc, --no-context-files        Skip AGENTS.md / CLAUDE.md
  -a, --approve                  Trust this project's .pi files, packages and .agents/skills for this run
  -na, --no-approve              Skip them for this run (no prompt, nothing saved)
  --system-prompt <text|file>    Replace the default system prompt
  --append-system-prompt <t|f>   Append to the system prompt (repeatable)
  --export <in.jsonl> [out.html] Export a session to HTML and exit
  --share <in.jsonl> [--yes]     Upload a session as a private GitHub gist and print its viewer link
                                 (pi's own; --yes skips the confirmation)
  --verbose                      Verbose start-up output (a failing plugin's traceback too)
  --offline                      No network at start-up (as PI_OFFLINE=1)
  --                             End of options: every later word is a message or an @file
  -h, --help                     Show this help
  -v, --version                  Show the version

Plugins add flags of their own (listed below once a run has loaded them).

Examples:
  # The interactive UI, or the UI with a first prompt
  pi
  pi "Find the slowest test in tests/"

  # Answer once and exit; piped input goes before the prompt
  pi -p "Summarize README.md"
  git diff | pi -p "Review this change"

  # Files in the first message (text is inlined, images attached)
  pi @src/app.py @screenshot.png "Why does the button overlap the logo?"

  # A prompt that starts with a dash
  pi -p -- "- is this bullet list complete?"

  # Several prompts, one after another
  pi -p "Read pyproject.toml" "Which dependencies are unpinned?"

  # Go on with the last session here, or pick one, or open one by id
  pi -c "And the integration tests?"
  pi -r
  pi --session 019a2b

  # A named session, or one kept in memory only
  pi --name "auth refactor"
  pi --no-session -p "What does this regex match: ^a+b?$"

  # Choose the model: provider/id, a pattern with a thinking level, a provider's model
  pi --model anthropic/claude-sonnet-4-5 "Refactor utils.py"
  pi --model sonnet:high "Find the race in worker.py"
  pi --provider openai --model gpt-4o-mini -p "Name this function"

  # Models to cycle through (the first starts); every model of a provider
  pi --models sonnet:high,haiku:low
  pi --models "openrouter/*"

  # Models you have keys for, filtered
  pi --list-models gemini

  # Read-only tools; one more tool than the defaults; all but one
  pi --tools read,grep,find,ls -p "Review the code in src/"
  pi --tools +grep
  pi --exclude-tools bash

  # JSON events for a script, or the RPC protocol for a program
  pi --mode json -p "List the TODOs" > events.jsonl
  pi --mode rpc --no-session

  # A plugin file for this run; what it registers
  pi -e ./my_tools.py
  pi -e ./my_tools.py tools

  # Install a tool pack, for you or for this project only
  pi install pi-acme-tools
  pi install -l ./packs/company-read

  # Switch plugins on or off for this project
  pi config -l

  # Keys and servers
  pi auth login anthropic
  pi auth check --provider openai
  pi mcp add time -- uvx mcp-server-time

  # Many sessions from a task file; pi in an editor
  pi batch tasks.jsonl --out results/ -j 4
  pi acp

  # A session as an HTML page
  pi --export ~/.pi/agent/sessions/--srv-my-proj--/2026-03-15T10-00-00-000Z_019a2b3c.jsonl out.html

Environment:
  PI_CODING_AGENT_DIR            Config directory (default ~/.pi/agent)
  PI_CODING_AGENT_SESSION_DIR    Session directory (below --session-dir, above the sessionDir setting)
  PI_OFFLINE                     1/true/yes: no network at start-up (also sets PI_SKIP_VERSION_CHECK)
  PI_CACHE_RETENTION             long: ask providers for long prompt-cache retention
  PI_MCP_STARTUP_WAIT            Seconds to wait for MCP servers at start-up
  PI_NPM_REGISTRY                Registry pi update --models reads Pi's model data from
  PI_OAUTH_CALLBACK_HOST         Host the sign-in callback server listens on (default 127.0.0.1)
  XDG_CACHE_HOME                 Where pi's caches live (default ~/.cache; pi's are in pi/)
  VISUAL, EDITOR                 The external editor of the interactive UI (Ctrl+G)
  SSL_CERT_FILE, SSL_CERT_DIR    CA certificates for provider requests (also REQUESTS_CA_BUNDLE)
  Provider keys (the first set one is used; pi auth login stores one instead):
  ANTHROPIC_API_KEY              Anthropic
  ANTHROPIC_OAUTH_TOKEN          Anthropic subscription token (wins over the key)
  ANTHROPIC_AUTH_TOKEN           Sent as Authorization: Bearer (a gateway's own credential)
  OPENAI_API_KEY                 OpenAI (OPENAI_BASE_URL, OPENAI_ORG_ID, OPENAI_PROJECT_ID too)
  AZURE_OPENAI_API_KEY           Azure OpenAI (or AZURE_OPENAI_AD_TOKEN, an Entra ID token)
  AZURE_OPENAI_BASE_URL          Azure endpoint, or AZURE_OPENAI_RESOURCE_NAME
  AZURE_OPENAI_API_VERSION       Azure API version (default v1)
  AZURE_OPENAI_DEPLOYMENT_NAME_MAP  model=deployment pairs, comma-separated
  GEMINI_API_KEY                 Google Gemini
  GOOGLE_CLOUD_API_KEY           Vertex AI key; or GOOGLE_APPLICATION_CREDENTIALS with
                                 GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION
  AWS_PROFILE                    Amazon Bedrock: a profile, or AWS_ACCESS_KEY_ID and
                                 AWS_SECRET_ACCESS_KEY (AWS_SESSION_TOKEN), or AWS_BEARER_TOKEN_BEDROCK;
                                 AWS_REGION picks the region
  COPILOT_GITHUB_TOKEN           GitHub Copilot
  DEEPSEEK_API_KEY               DeepSeek
  NVIDIA_API_KEY                 NVIDIA NIM
  GROQ_API_KEY                   Groq
  CEREBRAS_API_KEY               Cerebras
  XAI_API_KEY                    xAI Grok
  MISTRAL_API_KEY                Mistral
  OPENROUTER_API_KEY             OpenRouter
  AI_GATEWAY_API_KEY             Vercel AI Gateway
  FIREWORKS_API_KEY              Fireworks
  TOGETHER_API_KEY               Together AI
  BASETEN_API_KEY                Baseten
  HF_TOKEN                       Hugging Face
  ZAI_API_KEY                    Z.AI coding plan (ZAI_CODING_CN_API_KEY: China)
  MINIMAX_API_KEY                MiniMax (MINIMAX_CN_API_KEY: China)
  MOONSHOT_API_KEY               Moonshot AI
  KIMI_API_KEY                   Kimi for Coding
  OPENCODE_API_KEY               OpenCode Zen and OpenCode Go
  META_API_KEY                   Meta
  ANT_LING_API_KEY               Ant Ling
  TYPESAFE_API_KEY               Typesafe
  RADIUS_API_KEY                 Radius
  CLOUDFLARE_API_KEY             Cloudflare Workers AI and AI Gateway, with CLOUDFLARE_ACCOUNT_ID
                                 (and CLOUDFLARE_GATEWAY_ID for the gateway)
  QWEN_TOKEN_PLAN_TEAM_API_KEY   Qwen token plans: also QWEN_TOKEN_PLAN_TEAM_CN_API_KEY,
                                 QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY, QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY,
                                 and QWEN_TOKEN_PLAN_API_KEY, QWEN_TOKEN_PLAN_CN_API_KEY for both plans
  XIAOMI_API_KEY                 Xiaomi MiMo (XIAOMI_TOKEN_PLAN_CN_API_KEY, XIAOMI_TOKEN_PLAN_AMS_API_KEY,
                                 XIAOMI_TOKEN_PLAN_SGP_API_KEY: the token plans by region)

Built-in tools (read, bash, edit and write are active by default):
  read, bash, edit, write, grep, find, ls, powershell (Windows)
"""
