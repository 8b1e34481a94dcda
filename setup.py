"""Package list for setuptools: the repository folders plugins/ and builtin_tools/ install under the import names
pi_plugins and pi_builtin_tools, so another distribution's top-level ``plugins`` package can neither overwrite
nor delete ours (everything else is declared in pyproject.toml)."""

from setuptools import find_packages, setup

RENAMED = {"plugins": "pi_plugins", "builtin_tools": "pi_builtin_tools"}

packages = find_packages(include=["pi_core", "pi_core.*"])
for folder, name in RENAMED.items():
    packages += [name, *(f"{name}.{sub}" for sub in find_packages(folder))]

setup(packages=packages, package_dir={name: folder for folder, name in RENAMED.items()})
