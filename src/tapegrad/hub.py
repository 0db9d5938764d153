"""``tapegrad.hub``: torch.hub's downloads and entry points, with the standard library only.

* ``download_url_to_file`` fetches a URL (``urllib``) into a temporary file beside the target, checks an optional
  SHA-256 prefix, and renames it over the target only when it is whole.
* ``load_state_dict_from_url`` caches a checkpoint under ``<hub dir>/checkpoints`` and reads it with
  ``tapegrad.load``'s restricted unpickler (always: a downloaded file is never fully unpickled, see there).
* ``load`` / ``list`` / ``help`` call the entry points of a repository's ``hubconf.py``: a local directory
  (``source="local"``) or a GitHub repository ``owner/name[:ref]``, whose zip archive is downloaded into the hub
  directory as ``owner_name_ref`` after torch's trust check (``trust_repo``, the ``trusted_list`` file).

The hub directory is torch's: ``set_dir(d)`` if called, else ``$TORCH_HOME/hub``, where ``TORCH_HOME`` defaults
to ``$XDG_CACHE_HOME/torch`` and ``XDG_CACHE_HOME`` to ``~/.cache`` -- so tapegrad and torch share one cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import uuid
import warnings
import zipfile
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

# "-<hex>." in a file name is the start of the file's SHA-256 (resnet18-f37072fd.pth)
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
_CHUNK = 128 * 1024
_HUBCONF = "hubconf.py"

_hub_dir = None
# where repositories come from; tests point these at a local server (not a public switch)
_github_base = "https://github.com"
_github_api_base = "https://api.github.com"



# --- the hub directory ---------------------------------------------------------------------------------------
def _torch_home():
    default = os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "torch")
    return os.path.expanduser(os.getenv("TORCH_HOME", default))


def get_dir() -> str:
    """The hub's cache directory: the one given to ``set_dir``, else ``$TORCH_HOME/hub`` (``TORCH_HOME``
    defaulting to ``$XDG_CACHE_HOME/torch``, ``XDG_CACHE_HOME`` to ``~/.cache``), as torch's."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_torch_home(), "hub")


def set_dir(d) -> None:
    """Use ``d`` (``~`` expanded) as the hub's cache directory from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


# --- downloads -----------------------------------------------------------------------------------------------
class _Progress:
    """A progress line on stderr (percent when the size is known, else bytes), as torch's fallback without tqdm."""

    def __init__(self, total, enabled):
        self.total, self.enabled, self.done = total, enabled, 0

    def update(self, n):
        self.done += n
        if self.enabled:
            if self.total:
                sys.stderr.write(f"\r{100 * self.done / self.total:.1f}%")
            else:
                sys.stderr.write(f"\r{self.done:.1f} bytes")
            sys.stderr.flush()

    def close(self):
        if self.enabled:
            sys.stderr.write("\n")


def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None, progress: bool = True) -> None:
    """Download ``url`` to the path ``dst``.

    The bytes go to ``<dst>.<random>.partial`` first and are renamed over ``dst`` only when complete (and, with
    ``hash_prefix``, only when the file's SHA-256 hex digest starts with it: else torch's ``RuntimeError``
    'invalid hash value'), so a failed download never replaces a good file. ``progress`` writes the progress to
    stderr. Any URL ``urllib`` opens works (``https://``, ``http://``, ``file://``).
    """
    dst = os.path.expanduser(os.fspath(dst))
    while True:
        tmp = f"{dst}.{uuid.uuid4().hex}.partial"
        try:
            f = open(tmp, "xb")  # noqa: SIM115  (closed in the finally below)
            break
        except FileExistsError:
            continue
    try:
        with urlopen(Request(url, headers={"User-Agent": "torch.hub"})) as response:
            length = response.info().get_all("Content-Length")
            bar = _Progress(int(length[0]) if length else None, progress)
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            while chunk := response.read(_CHUNK):
                f.write(chunk)
                if sha256 is not None:
                    sha256.update(chunk)
                bar.update(len(chunk))
            bar.close()
        f.close()
        if sha256 is not None:
            digest = sha256.hexdigest()
            if digest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
        os.replace(tmp, dst)
    finally:
        f.close()
        if os.path.exists(tmp):
            os.remove(tmp)


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location=None, progress: bool = True,
                             check_hash: bool = False, file_name: str | None = None, weights_only: bool = False):
    """Load the checkpoint at ``url``, downloading it into ``model_dir`` (default ``<get_dir()>/checkpoints``)
    unless a file of that name (``file_name``, else the URL's last path component) is already there.

    ``check_hash`` checks the download against the hex digits after the last ``-`` of the file name
    (``resnet18-f37072fd.pth``: the SHA-256 must start with ``f37072fd``), as torch does. A zip holding a single
    file (the pre-1.6 way to ship a checkpoint) is extracted beside it first, with a ``FutureWarning`` as in torch.

    Unlike torch, ``weights_only=False`` does not unpickle the file fully: a file from a URL is loaded by
    ``tapegrad.load``'s restricted unpickler either way (tensors, dtypes, ``OrderedDict``, plain containers and
    what ``tapegrad.serialization.add_safe_globals`` allows), so a downloaded pickle never runs code; one that
    needs more raises ``WeightsOnlyError``. For a file you trust, call ``download_url_to_file`` and then
    ``tapegrad.load(path, weights_only=False)`` yourself.
    """
    from . import serialization
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached = os.path.join(model_dir, filename)
    if not os.path.exists(cached):
        sys.stdout.write(f'Downloading: "{url}" to {cached}\n')
        match = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached, match.group(1) if match else None, progress=progress)
    if _is_single_file_zip(cached):
        warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in favor of default "
                      "zipfile format introduced in 1.6. Please redo torch.save() to save it in the new zipfile "
                      "format.", FutureWarning, stacklevel=2)
        with zipfile.ZipFile(cached) as z:
            _safe_extract_zip(z, model_dir)
            cached = os.path.join(model_dir, z.infolist()[0].filename)
    return serialization.load(cached, map_location=map_location, weights_only=True)


def _is_single_file_zip(path):
    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as z:
        members = z.infolist()
    return len(members) == 1 and not members[0].is_dir()


def _safe_extract_zip(archive, target):
    """Extract ``archive`` into ``target``, refusing any entry that would land outside it (with torch's words)."""
    root = os.path.realpath(target)
    for member in archive.infolist():
        name = os.path.normpath(member.filename)
        if name.startswith(("/", "\\")) or (len(name) >= 2 and name[1] == ":" and name[0].isalpha()):
            raise ValueError(f"Archive entry has absolute path: {member.filename}")
        if ".." in re.split(r"[/\\]", name):
            raise ValueError(f"Archive entry contains directory traversal: {member.filename}")
        if os.path.commonpath([root, os.path.realpath(os.path.join(root, name))]) != root:
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
        archive.extract(member, root)


# --- repositories --------------------------------------------------------------------------------------------
def _parse_repo_info(github):
    repo_info, ref = github.split(":") if ":" in github else (github, None)
    try:
        owner, name = repo_info.split("/")
    except ValueError as e:   # torch's own words (the unpacking error), then what was expected
        raise ValueError(f"{e}: expected a repository as 'repo_owner/repo_name[:ref]', got {github!r}") from None
    if ref is None:           # the default branch: main if the repository has one, else master
        try:
            with urlopen(f"{_github_base}/{owner}/{name}/tree/main/"):
                ref = "main"
        except HTTPError as e:
            if e.code != 404:
                raise
            ref = "master"
        except URLError as e:
            for candidate in ("main", "master"):
                if os.path.exists(f"{get_dir()}/{owner}_{name}_{candidate}"):
                    ref = candidate
                    break
            else:
                raise RuntimeError("It looks like there is no internet connection and the repo could not be found "
                                   f"in the cache ({get_dir()})") from e
    return owner, name, ref


def _read_json(url, headers):
    with urlopen(Request(url, headers=headers)) as r:
        return json.loads(r.read().decode(r.headers.get_content_charset("utf-8")))


def _validate_not_a_forked_repo(owner, name, ref):
    """The ref must be a branch, a tag or a commit of ``owner/name`` itself (GitHub serves a fork's commits under
    the parent's name too), asked of the GitHub API as torch does (``GITHUB_TOKEN`` if set)."""
    headers = {"Accept": "application/vnd.github.v3+json"}
    if os.environ.get("GITHUB_TOKEN") is not None:
        headers["Authorization"] = f"token {os.environ['GITHUB_TOKEN']}"
    for kind in ("branches", "tags"):
        page = 1
        while True:
            url = f"{_github_api_base}/repos/{owner}/{name}/{kind}?per_page=100&page={page}"
            try:
                entries = _read_json(url, headers)
            except HTTPError:
                headers.pop("Authorization", None)        # the token may lack the permission: try without
                entries = _read_json(url, headers)
            if not entries:
                break
            if any(e["name"] == ref or e["commit"]["sha"].startswith(ref) for e in entries):
                return
            page += 1
    raise ValueError(f"Cannot find {ref} in https://github.com/{owner}/{name}. If it's a commit from a forked "
                     "repo, please call hub.load() with forked repo directly.")


def _check_repo_is_trusted(owner, name, owner_name_ref, trust_repo):
    """torch's trust check: a repository is trusted if listed in ``<hub dir>/trusted_list``, already downloaded
    (a folder of that name), or owned by one of torch's trusted owners; otherwise (or with ``trust_repo=False``)
    the user is asked. A trusted repository is added to the list."""
    hub_dir = get_dir()
    list_path = os.path.join(hub_dir, "trusted_list")
    if not os.path.exists(list_path):
        open(list_path, "a").close()
    with open(list_path) as fh:
        listed = {line.strip() for line in fh}
    owner_name = f"{owner}_{name}"
    downloaded = next(os.walk(hub_dir))[1]
    trusted = owner_name in listed or owner_name_ref in downloaded or owner in _TRUSTED_REPO_OWNERS
    if trust_repo is False or (trust_repo == "check" and not trusted):
        answer = input(f"The repository {owner_name} does not belong to the list of trusted repositories and as "
                       "such cannot be downloaded. Do you trust this repository and wish to add it to the trusted "
                       "list of repositories (y/N)?")
        if answer.lower() in ("y", "yes"):
            if trusted:
                print("The repository is already trusted.")
        elif answer.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # noqa: TRY002  (torch raises this very type)
        else:
            raise ValueError(f"Unrecognized response {answer}.")
    if not trusted:
        with open(list_path, "a") as fh:
            fh.write(owner_name + "\n")


def _get_cache_or_reload(github, force_reload, trust_repo, verbose=True, skip_validation=False):
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _parse_repo_info(github)
    safe_ref = ref.replace("/", "_")                  # a branch name may hold "/"
    owner_name_ref = f"{owner}_{name}_{safe_ref}"
    repo_dir = os.path.join(hub_dir, owner_name_ref)
    _check_repo_is_trusted(owner, name, owner_name_ref, trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    if not skip_validation:
        _validate_not_a_forked_repo(owner, name, ref)
    archive = os.path.join(hub_dir, safe_ref + ".zip")
    _remove(archive)
    url = f"{_github_base}/{owner}/{name}/zipball/{ref}"
    sys.stdout.write(f'Downloading: "{url}" to {archive}\n')
    try:
        download_url_to_file(url, archive, progress=False)
    except HTTPError as e:
        if e.code != 300:
            raise
        warnings.warn(f"The ref {ref} is ambiguous. Perhaps it is both a tag and a branch in the repo? Torchhub will "
                      "now assume that it's a branch. You can disambiguate tags and branches by explicitly passing "
                      "refs/heads/branch_name or refs/tags/tag_name as the ref. That might require using "
                      "skip_validation=True.", stacklevel=2)
        download_url_to_file(f"{_github_base}/{owner}/{name}/zipball/refs/heads/{ref}", archive, progress=False)
    with zipfile.ZipFile(archive) as z:
        top = z.infolist()[0].filename        # GitHub's archive holds one folder, owner-name-<sha>/
        extracted = os.path.join(hub_dir, top)
        _remove(extracted)
        _safe_extract_zip(z, hub_dir)
    _remove(archive)
    _remove(repo_dir)
    shutil.move(extracted, repo_dir)
    return repo_dir


def _remove(path):
    if os.path.isfile(path) or os.path.islink(path):
        os.remove(path)
    elif os.path.exists(path):
        shutil.rmtree(path)


# --- hubconf ----------------------------------------------------------------------------------------------------
@contextlib.contextmanager
def _on_sys_path(path):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_hubconf(repo_dir):
    """Run ``<repo_dir>/hubconf.py`` as a fresh module (with ``repo_dir`` first on ``sys.path`` meanwhile, so
    that it imports the repository's own modules)."""
    path = os.path.join(repo_dir, _HUBCONF)
    spec = importlib.util.spec_from_file_location(_HUBCONF, path)
    if spec is None:
        raise AssertionError(f"failed to load spec from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load_entry_from_hubconf(module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    missing = [dep for dep in (getattr(module, "dependencies", None) or ())
               if importlib.util.find_spec(dep) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    entry = getattr(module, model, None)
    if entry is None or not callable(entry):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return entry


def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True):  # noqa: A001
    """The names of the entry points (public callables) of ``github``'s (``owner/name[:ref]``) ``hubconf.py``."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=verbose,
                                    skip_validation=skip_validation)
    with _on_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
    return [n for n in dir(module) if callable(getattr(module, n)) and not n.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):  # noqa: A001
    """The docstring of the entry point ``model`` of ``github``'s ``hubconf.py``."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=True, skip_validation=skip_validation)
    with _on_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
    return _load_entry_from_hubconf(module, model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """Call the entry point ``model`` of a ``hubconf.py`` with ``*args, **kwargs`` and return what it returns.

    ``source="local"``: ``repo_or_dir`` is a directory holding ``hubconf.py``. ``source="github"``:
    ``repo_or_dir`` is ``owner/name[:ref]`` (``ref`` a branch or tag; default ``main``, else ``master``), whose
    archive is downloaded into ``get_dir()`` once (``force_reload`` downloads it again) after the trust check
    (``trust_repo``: ``"check"`` asks unless the repository is trusted, ``True`` trusts it, ``False`` always
    asks) and, unless ``skip_validation``, a check that the ref belongs to the repository and not to a fork.
    The module's ``dependencies`` list must all be importable. Running ``hubconf.py`` runs the repository's code:
    load only repositories you trust.
    """
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _get_cache_or_reload(repo_or_dir, force_reload, trust_repo, verbose=verbose,
                                           skip_validation=skip_validation)
    return _load_local(repo_or_dir, model, *args, **kwargs)


def _load_local(hubconf_dir, model, *args, **kwargs):
    with _on_sys_path(hubconf_dir):
        module = _import_hubconf(hubconf_dir)
        entry = _load_entry_from_hubconf(module, model)
        return entry(*args, **kwargs)
