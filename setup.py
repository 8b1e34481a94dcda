"""Package list for setuptools: the repository folders plugins/ and builtin_tools/ install under the import names
pi_plugins and pi_builtin_tools, so another distribution's top-level ``plugins`` package can neither overwrite
nor delete ours; the example plugins of examples/pi-examples ship as pi_examples (everything else is declared in
pyproject.toml)."""

import shutil
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

RENAMED = {"plugins": "pi_plugins", "builtin_tools": "pi_builtin_tools",
           "examples/pi-examples/src/pi_examples": "pi_examples"}  # opt-in example plugins (group pi.optional)

packages = find_packages(include=["pi_core", "pi_core.*"])
for folder, name in RENAMED.items():
    packages += [name, *(f"{name}.{sub}" for sub in find_packages(folder))]



class BuildWithDocs(build_py):
    """Ship README.md, CONTRIBUTING.md, CHANGELOG.md and docs/ inside the package (``pi_core/_docs``): the
    system prompt, pi's help texts and ``/changelog`` read these files, and a wheel install has no source
    checkout to point at."""

    def run(self) -> None:
        super().run()
        root = Path(__file__).resolve().parent
        target = Path(self.build_lib) / "pi_core" / "_docs"
        names = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md", *(f"docs/{p.name}" for p in sorted((root / "docs").glob("*.md")))]
        for name in names:
            if (root / name).is_file():
                (target / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(root / name, target / name)


setup(packages=packages, package_dir={name: folder for folder, name in RENAMED.items()},
      cmdclass={"build_py": BuildWithDocs})
