"""Build pi's model catalog from the data in Pi's ``@earendil-works/pi-ai`` npm package.

The package ships one JSON file per provider (``dist/providers/data/<provider>.json``: models grouped by
API, each with id, name, api, baseUrl, costs, limits, reasoning, input and compat) and one JS module per
provider naming it (``dist/providers/<provider>.js``). ``build_catalog`` turns them into pi's catalog
format; ``plugins/catalog_models.json`` is its output for the pinned package and is never edited by hand::

    python -m pi_core.models.catalog_build --package-dir node_modules/@earendil-works/pi-ai
    python -m pi_core.models.catalog_build --version 1.6.0          # download it from the npm registry

``pi update --models`` runs the same build on the newest published package and keeps the result in the
agent directory (``catalog_cache_path``), where the catalog plugin prefers it to the bundled file.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_core import config_paths
from pi_core.errors import PiError

if TYPE_CHECKING:
    from pi_core.types import Model

PACKAGE = "@earendil-works/pi-ai"
DEFAULT_REGISTRY = "https://registry.npmjs.org"
REGISTRY_ENV = ("PI_NPM_REGISTRY", "npm_config_registry", "NPM_CONFIG_REGISTRY")
FETCH_TIMEOUT_S = 20.0
CACHE_FILE = "models-catalog.json"
FORMAT_VERSION = 1

# Model kinds pi can talk to. Classifier and image models (their own APIs, used by Pi's codemode) are
# counted in the catalog's ``unsupported`` section instead.
CHAT_TYPE = "chat"
_MODEL_FIELDS = ("id", "name", "api", "baseUrl", "reasoning", "input", "cost", "contextWindow", "maxTokens",
                 "thinkingLevelMap", "headers", "compat", "promptCache")
_PROVIDER_DEFAULTS = ("api", "baseUrl", "headers")  # as pi_core.models.entries fills them in
_SHAPE_ERRORS = (KeyError, TypeError, AttributeError, ValueError)
_CREATE_PROVIDER = re.compile(r'createProvider\(\{\s*id:\s*"([^"]+)",\s*name:\s*"([^"]+)"')
_NAMED_OPTION = re.compile(r'const name = options\.name \?\? "([^"]+)"')


class CatalogBuildError(PiError):
    """The package could not be fetched or did not contain the expected data."""


@dataclass
class PackageData:
    """What the build reads from one pi-ai package: its version and, per provider, data and module text."""

    version: str
    data: dict[str, dict[str, Any]] = field(default_factory=dict)  # open: the model catalog, JSON
    modules: dict[str, str] = field(default_factory=dict)
    generated_at: str | None = None


# --- reading a package ----------------------------------------------------------------------------


def read_package_dir(root: Path) -> PackageData:
    """A pi-ai package unpacked on disk (``node_modules/@earendil-works/pi-ai``)."""
    files: dict[str, bytes] = {}
    providers = root / "dist" / "providers"
    if not (providers / "data").is_dir():
        raise CatalogBuildError(f"{root} is not a {PACKAGE} package: {providers / 'data'} is missing")
    for path in [root / "package.json", *providers.glob("*.js"), *(providers / "data").glob("*.json"),
                 providers / "data" / ".manifest.json"]:
        if path.is_file():
            files[path.relative_to(root).as_posix()] = path.read_bytes()
    return _package_from_files(files, str(root))


def read_package_tarball(blob: bytes) -> PackageData:
    """The npm tarball of a pi-ai package (every path starts with ``package/``)."""
    import io
    import tarfile

    files: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as archive:
            for member in archive.getmembers():
                name = member.name.removeprefix("package/")
                wanted = name == "package.json" or (
                    name.startswith("dist/providers/") and name.endswith((".js", ".json")))
                if member.isfile() and wanted:
                    extracted = archive.extractfile(member)
                    if extracted is not None:
                        files[name] = extracted.read()
    except (tarfile.TarError, OSError, EOFError) as err:
        raise CatalogBuildError(f"the {PACKAGE} tarball could not be read: {err}") from err
    return _package_from_files(files, f"the {PACKAGE} tarball")


def _package_from_files(files: dict[str, bytes], where: str) -> PackageData:
    try:
        meta = json.loads(files["package.json"])
    except (KeyError, ValueError) as err:
        raise CatalogBuildError(f"{where} has no readable package.json") from err
    if meta.get("name") != PACKAGE:
        raise CatalogBuildError(f"{where} is {meta.get('name')!r}, not {PACKAGE}")
    package = PackageData(version=str(meta.get("version", "")))
    for name, blob in sorted(files.items()):
        stem = name.rsplit("/", 1)[-1]
        try:
            if name.startswith("dist/providers/data/") and stem == ".manifest.json":
                package.generated_at = json.loads(blob).get("generatedAt")
            elif name.startswith("dist/providers/data/") and stem.endswith(".json"):
                package.data[stem.removesuffix(".json")] = json.loads(blob)
            elif name.count("/") == 2 and stem.endswith(".js") and not stem.endswith(".models.js"):
                package.modules[stem.removesuffix(".js")] = blob.decode("utf-8", "replace")
        except ValueError as err:
            raise CatalogBuildError(f"{where}: {name} is not valid JSON ({err})") from err
    if not package.data:
        raise CatalogBuildError(f"{where} contains no dist/providers/data/*.json model data")
    return package


def registry_url() -> str:
    """The npm registry to ask: ``PI_NPM_REGISTRY``, else npm's own ``npm_config_registry``, else npmjs.org."""
    for name in REGISTRY_ENV:
        value = os.environ.get(name, "").strip()
        if value:
            return value.rstrip("/")
    return DEFAULT_REGISTRY


def fetch_package(version: str = "latest", registry: str | None = None,
                  timeout_s: float = FETCH_TIMEOUT_S) -> PackageData:
    """Download ``PACKAGE@version`` from the npm registry; raises CatalogBuildError naming the registry."""
    import httpx2

    base = (registry or registry_url()).rstrip("/")
    meta_url = f"{base}/{PACKAGE.replace('/', '%2f')}/{version}"
    try:
        with httpx2.Client(timeout=timeout_s, follow_redirects=True) as client:
            meta = client.get(meta_url, headers={"accept": "application/json"})
            if meta.status_code != 200:
                raise CatalogBuildError(f"the npm registry at {base} answered {meta.status_code} for "
                                        f"{PACKAGE}@{version}")
            tarball = (meta.json().get("dist") or {}).get("tarball")
            if not isinstance(tarball, str) or not tarball:
                raise CatalogBuildError(f"the npm registry at {base} gave no tarball for {PACKAGE}@{version}")
            blob = client.get(tarball)
            if blob.status_code != 200:
                raise CatalogBuildError(f"downloading {tarball} failed with HTTP {blob.status_code}")
    except httpx2.HTTPError as err:
        raise CatalogBuildError(f"the npm registry at {base} is not reachable ({err or type(err).__name__})") \
            from err
    except ValueError as err:
        raise CatalogBuildError(f"the npm registry at {base} sent an unreadable answer ({err})") from err
    return read_package_tarball(blob.content)


# --- building the catalog -------------------------------------------------------------------------


def provider_name(provider: str, module: str | None) -> str:
    """The display name the provider's JS module gives it (``createProvider({ id, name })``)."""
    if module:
        for found_id, name in _CREATE_PROVIDER.findall(module):
            if found_id == provider:
                return str(name)
        named = _NAMED_OPTION.search(module)
        if named:
            return named.group(1)
    return provider


def _model_entry(raw: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    for key in _MODEL_FIELDS:
        if key not in raw or raw[key] is None:
            continue
        if key in defaults and raw[key] == defaults[key]:
            continue
        entry[key] = raw[key]
    return entry


def _most_common(values: list[Any]) -> Any:
    counts = Counter(json.dumps(v, sort_keys=True) for v in values)
    return json.loads(counts.most_common(1)[0][0])


def build_catalog(package: PackageData) -> dict[str, Any]:  # open: the model catalog, JSON
    """pi's catalog: ``{"source", "providers": {id: {name, api, baseUrl, models}}, "unsupported"}``.

    Provider-level ``api``/``baseUrl``/``headers`` are the values most of its models share; a model lists
    only the fields that differ. Non-chat models are counted per API and provider under ``unsupported``.
    """
    providers: dict[str, Any] = {}
    unsupported: dict[str, dict[str, list[str]]] = {}
    for provider in sorted(package.data):
        try:
            entry = _provider_entry(provider, package, unsupported)
        except _SHAPE_ERRORS as err:
            what = f"a model has no {err.args[0]}" if isinstance(err, KeyError) else \
                "an entry is not an object with the expected fields"
            raise CatalogBuildError(f"the {provider} model data of {PACKAGE} {package.version} is not in the "
                                    f"shape pi reads ({what})") from err
        providers[provider] = entry
    return {
        "format": FORMAT_VERSION,
        "source": {"package": PACKAGE, "version": package.version, "generatedAt": package.generated_at},
        "providers": providers,
        "unsupported": {api: dict(sorted(by.items())) for api, by in sorted(unsupported.items())},
    }


def _provider_entry(provider: str, package: PackageData, unsupported: dict[str, dict[str, list[str]]]) \
        -> dict[str, Any]:
    """One provider's catalog entry; its non-chat models are added to ``unsupported``."""
    name = provider_name(provider, package.modules.get(provider))
    chat: list[dict[str, Any]] = []
    for api, group in package.data[provider].items():
        for raw in group.values():
            if raw.get("type", CHAT_TYPE) == CHAT_TYPE:
                chat.append(raw)
            else:
                unsupported.setdefault(api, {}).setdefault(provider, []).append(raw["id"])
    if not chat:  # classifier-only (typesafe): still a provider, with no chat models
        return {"name": name, "models": []}
    defaults: dict[str, Any] = {"api": _most_common([m["api"] for m in chat]),
                                "baseUrl": _most_common([m["baseUrl"] for m in chat])}
    headers = [m.get("headers") for m in chat]
    if headers[0] and all(h == headers[0] for h in headers):
        defaults["headers"] = headers[0]
    seen: set[str] = set()
    models: list[dict[str, Any]] = []
    for raw in chat:
        if raw["id"] in seen:  # Pi keys models by id: a later API group's entry would replace it
            models = [m for m in models if m["id"] != raw["id"]]
        seen.add(raw["id"])
        models.append(_model_entry(raw, defaults))
    return {"name": name, **{k: defaults[k] for k in _PROVIDER_DEFAULTS if k in defaults}, "models": models}


def models_of(catalog: dict[str, Any]) -> list[Model]:  # open: the model catalog, JSON
    """The models of a catalog with their provider's defaults (api, baseUrl, headers) filled in."""
    from pi_core.models.entries import catalog_entries

    return list(catalog_entries(catalog))


def unreadable_model(catalog: dict[str, Any]) -> str | None:  # open: the model catalog, JSON
    """Why some model of ``catalog`` cannot be used by this pi (the first one found), or None when all can."""
    from pydantic import ValidationError

    for provider, entry in catalog["providers"].items():
        try:
            models_of({"providers": {provider: entry}})
        except ValidationError as err:
            problem = err.errors()[0]
            where = ".".join(str(part) for part in problem["loc"])
            return f"a {provider} model has an invalid {where} ({problem['msg']})"
        except _SHAPE_ERRORS:
            return f"the {provider} entry is not in the catalog format"
    return None


def dump_catalog(catalog: dict[str, Any]) -> str:  # open: the model catalog, JSON
    """Stable text: one model per line, so a catalog update reads as a per-model diff."""
    lines = ["{", f'  "format": {json.dumps(catalog["format"])},',
             f'  "source": {json.dumps(catalog["source"])},', '  "providers": {']
    providers = list(catalog["providers"].items())
    for index, (name, entry) in enumerate(providers):
        lines.append(f"    {json.dumps(name)}: {{")
        for key, value in entry.items():
            if key != "models":
                lines.append(f"      {json.dumps(key)}: {json.dumps(value)},")
        lines.append('      "models": [')
        models = entry["models"]
        lines += [f"        {json.dumps(m)}{',' if i < len(models) - 1 else ''}" for i, m in enumerate(models)]
        lines.append("      ]")
        lines.append("    }" + ("," if index < len(providers) - 1 else ""))
    lines.append("  },")
    lines.append(f'  "unsupported": {json.dumps(catalog["unsupported"])}')
    lines.append("}")
    return "\n".join(lines) + "\n"


def catalog_cache_path() -> Path:
    """Where ``pi update --models`` keeps the catalog it built (the agent directory)."""
    return config_paths.agent_dir() / CACHE_FILE


def write_catalog(catalog: dict[str, Any], path: Path) -> None:  # open: the model catalog, JSON
    """Write atomically: a reader never sees half a catalog."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(dump_catalog(catalog), encoding="utf-8")
    os.replace(tmp, path)


def refresh_cached_catalog(registry: str | None = None) -> str:
    """``pi update --models``: build the catalog from the newest published package and keep it in the agent
    directory. The result line, or CatalogBuildError saying why not (the bundled catalog stays in use)."""
    if os.environ.get("PI_OFFLINE", "").lower() in ("1", "true", "yes"):
        raise CatalogBuildError("Offline (PI_OFFLINE): model catalogs not refreshed; pi keeps the catalog it has")
    try:
        catalog = build_catalog(fetch_package("latest", registry))
        problem = unreadable_model(catalog)
        if problem is not None:
            raise CatalogBuildError(f"{catalog['source']['version']} has models this pi cannot read: {problem}")
    except CatalogBuildError as err:
        raise CatalogBuildError(f"Could not refresh model catalogs: {err}. pi keeps the catalog it has.") from err
    write_catalog(catalog, catalog_cache_path())
    return f"Model catalogs refreshed ({summary(catalog)})"


def summary(catalog: dict[str, Any]) -> str:  # open: the model catalog, JSON
    providers = catalog["providers"]
    count = sum(len(p["models"]) for p in providers.values())
    return f"{catalog['source']['package']} {catalog['source']['version']}: {len(providers)} providers, {count} models"


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m pi_core.models.catalog_build",
                                     description=f"Build pi's model catalog from {PACKAGE}.")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--package-dir", type=Path, help=f"an unpacked {PACKAGE} package")
    source.add_argument("--version", default=None, help="download this version from the npm registry")
    parser.add_argument("--registry", default=None, help="npm registry URL (default: npm's configuration)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[2] / "plugins"
                        / "catalog_models.json", help="where to write (default: plugins/catalog_models.json)")
    args = parser.parse_args(argv)
    try:
        package = read_package_dir(args.package_dir) if args.package_dir else \
            fetch_package(args.version or "latest", args.registry)
        catalog = build_catalog(package)
        write_catalog(catalog, args.out)
    except CatalogBuildError as err:
        sys.stderr.write(f"Error: {err}\n")
        return 1
    sys.stdout.write(f"Wrote {args.out} ({summary(catalog)})\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
