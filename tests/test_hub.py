"""tapegrad.hub against torch.hub: the cache directory, downloads (file:// and a local HTTP server in a thread),
checkpoints from URLs, and hubconf entry points from a directory and from a "GitHub" served locally."""

import hashlib
import http.server
import io
import json
import os
import pickle
import threading
import zipfile

import numpy as np
import pytest
import torch

import tapegrad
from tapegrad import hub

HUBCONF = '''
"""A tiny hub repository."""
dependencies = ["numpy"]

from helper import SCALE   # a module of the repository itself (the repo dir is on sys.path while loading)


def tiny(n, scale=1.0):
    """Return a list of n scaled numbers."""
    return [i * scale * SCALE for i in range(n)]


def _private():
    return "hidden"


not_callable = 3
'''


@pytest.fixture
def hub_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(torch.hub, "_hub_dir", str(tmp_path / "torch_hub"))    # torch's runs stay in tmp_path too
    before = hub._hub_dir
    hub.set_dir(tmp_path / "hub")
    yield tmp_path / "hub"
    hub._hub_dir = before


def _repo(path, hubconf=HUBCONF):
    path.mkdir(parents=True, exist_ok=True)
    (path / "hubconf.py").write_text(hubconf)
    (path / "helper.py").write_text("SCALE = 2\n")
    return path


class _Server:
    """A local HTTP server in a thread answering ``routes`` (path -> (status, body bytes)); records requests."""

    def __init__(self):
        self.routes, self.requests = {}, []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                server.requests.append((self.path, self.headers.get("User-Agent")))
                status, body = server.routes.get(self.path, (404, b"not found"))
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = _Server()
    yield s
    s.close()


# --- the hub directory ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("env", [{}, {"TORCH_HOME": "/tmp/th"}, {"XDG_CACHE_HOME": "/tmp/xdg"},
                                 {"TORCH_HOME": "~/th", "XDG_CACHE_HOME": "/tmp/xdg"}])
def test_get_dir_follows_torch_home_and_xdg_cache_home(monkeypatch, env):
    monkeypatch.setattr(hub, "_hub_dir", None)
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    for k in ("TORCH_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert hub.get_dir() == torch.hub.get_dir()
    if not env:
        assert hub.get_dir() == os.path.expanduser("~/.cache/torch/hub")


def test_set_dir_expands_the_user(monkeypatch):
    monkeypatch.setattr(hub, "_hub_dir", None)
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    hub.set_dir("~/somewhere")
    torch.hub.set_dir("~/somewhere")
    assert hub.get_dir() == torch.hub.get_dir() == os.path.expanduser("~/somewhere")


def test_hub_is_a_lazy_top_level_module():
    assert tapegrad.hub is hub
    assert "hub" in dir(tapegrad)


# --- downloads -----------------------------------------------------------------------------------------------
def test_download_from_a_file_url_with_a_hash_prefix(tmp_path):
    data = os.urandom(300_000)                    # more than one read chunk
    src = tmp_path / "blob.bin"
    src.write_bytes(data)
    dst = tmp_path / "out" / "copy.bin"
    dst.parent.mkdir()
    digest = hashlib.sha256(data).hexdigest()
    hub.download_url_to_file(src.as_uri(), str(dst), hash_prefix=digest[:10], progress=False)
    assert dst.read_bytes() == data
    assert os.listdir(dst.parent) == ["copy.bin"]          # no .partial file left behind


def test_hash_mismatch_says_what_torch_says_and_keeps_the_old_file(tmp_path):
    src = tmp_path / "blob.bin"
    src.write_bytes(b"new contents")
    dst = tmp_path / "dst.bin"
    dst.write_bytes(b"good old file")
    with pytest.raises(RuntimeError) as ours:
        hub.download_url_to_file(src.as_uri(), str(dst), hash_prefix="deadbeef", progress=False)
    with pytest.raises(RuntimeError) as theirs:
        torch.hub.download_url_to_file(src.as_uri(), str(tmp_path / "t.bin"), hash_prefix="deadbeef", progress=False)
    assert str(ours.value) == str(theirs.value)
    assert str(ours.value).startswith('invalid hash value (expected "deadbeef", got "')
    assert dst.read_bytes() == b"good old file"
    assert sorted(os.listdir(tmp_path)) == ["blob.bin", "dst.bin"]


def test_download_over_http_reports_progress(tmp_path, server, capsys):
    data = bytes(range(256)) * 1000
    server.routes["/w.bin"] = (200, data)
    hub.download_url_to_file(server.url + "/w.bin", str(tmp_path / "w.bin"))
    assert (tmp_path / "w.bin").read_bytes() == data
    assert "100.0%" in capsys.readouterr().err
    assert server.requests == [("/w.bin", "torch.hub")]


def test_a_failed_download_leaves_nothing(tmp_path, server):
    from urllib.error import HTTPError
    with pytest.raises(HTTPError):
        hub.download_url_to_file(server.url + "/missing.bin", str(tmp_path / "m.bin"), progress=False)
    assert os.listdir(tmp_path) == []


# --- checkpoints from URLs -----------------------------------------------------------------------------------
def _checkpoint_bytes(tmp_path, state):
    path = tmp_path / "staging.pth"
    tapegrad.save(state, path)
    data = path.read_bytes()
    path.unlink()
    return data


def test_load_state_dict_from_url_caches_and_checks_the_hash_in_the_name(tmp_path, server, hub_dir, capsys):
    state = {"w": tapegrad.arange(6.0).reshape(2, 3), "b": tapegrad.zeros(3, dtype=tapegrad.float64)}
    data = _checkpoint_bytes(tmp_path, state)
    name = f"tiny-{hashlib.sha256(data).hexdigest()[:8]}.pth"
    server.routes["/models/" + name] = (200, data)
    url = f"{server.url}/models/{name}"
    got = hub.load_state_dict_from_url(url, check_hash=True, progress=False)
    assert f'Downloading: "{url}" to {hub_dir / "checkpoints" / name}' in capsys.readouterr().out
    assert set(got) == {"w", "b"} and got["b"].dtype == tapegrad.float64
    np.testing.assert_array_equal(got["w"].numpy(), state["w"].numpy())
    assert (hub_dir / "checkpoints" / name).read_bytes() == data
    # torch reads the same URL to the same values
    theirs = torch.hub.load_state_dict_from_url(url, model_dir=str(tmp_path / "t"), progress=False,
                                                check_hash=True, weights_only=True)
    np.testing.assert_array_equal(theirs["w"].numpy(), got["w"].numpy())
    # cached: the second call does not download
    del server.routes["/models/" + name]
    n = len(server.requests)
    again = hub.load_state_dict_from_url(url, check_hash=True, progress=False)
    np.testing.assert_array_equal(again["w"].numpy(), got["w"].numpy())
    assert len(server.requests) == n


def test_load_state_dict_from_url_hash_mismatch_and_file_name(tmp_path, server, hub_dir):
    data = _checkpoint_bytes(tmp_path, {"x": tapegrad.ones(2)})
    server.routes["/m-0000abcd.pth"] = (200, data)
    with pytest.raises(RuntimeError, match='invalid hash value \\(expected "0000abcd"'):
        hub.load_state_dict_from_url(server.url + "/m-0000abcd.pth", check_hash=True, progress=False)
    assert not (hub_dir / "checkpoints" / "m-0000abcd.pth").exists()
    # without check_hash the name's digits are not checked; file_name renames the cached file
    got = hub.load_state_dict_from_url(server.url + "/m-0000abcd.pth", model_dir=str(tmp_path / "md"),
                                       file_name="renamed.pt", progress=False)
    assert (tmp_path / "md" / "renamed.pt").exists()
    assert got["x"].tolist() == [1.0, 1.0]


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_a_downloaded_pickle_never_runs_code_even_with_weights_only_false(tmp_path, server, hub_dir):
    buf = io.BytesIO()
    torch.save({"evil": _Evil()}, buf)
    server.routes["/evil.pth"] = (200, buf.getvalue())
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        hub.load_state_dict_from_url(server.url + "/evil.pth", weights_only=False, progress=False)


def test_a_torch_checkpoint_in_a_single_file_zip_loads_with_torchs_warning(tmp_path, server, hub_dir):
    inner = io.BytesIO()
    torch.save({"t": torch.tensor([1.5, 2.5])}, inner)
    outer = io.BytesIO()
    with zipfile.ZipFile(outer, "w") as z:
        z.writestr("weights.pth", inner.getvalue())
    server.routes["/zipped.zip"] = (200, outer.getvalue())
    with pytest.warns(FutureWarning, match="Falling back to the old format < 1.6"):
        got = hub.load_state_dict_from_url(server.url + "/zipped.zip", progress=False)
    assert got["t"].tolist() == [1.5, 2.5]
    assert (hub_dir / "checkpoints" / "weights.pth").exists()


# --- hubconf from a directory --------------------------------------------------------------------------------
def test_load_local_calls_the_entry_point_as_torch_does(tmp_path):
    repo = str(_repo(tmp_path / "repo"))
    ours = hub.load(repo, "tiny", 3, source="local", scale=0.5)
    assert ours == torch.hub.load(repo, "tiny", 3, source="local", scale=0.5) == [0.0, 1.0, 2.0]
    assert repo not in __import__("sys").path


@pytest.mark.parametrize("model,hubconf,exc", [
    ("nope", HUBCONF, RuntimeError),                         # Cannot find callable nope in hubconf
    ("not_callable", HUBCONF, RuntimeError),
    (3, HUBCONF, ValueError),                                # model should be a string
    ("tiny", HUBCONF.replace('["numpy"]', '["numpy", "no_such_pkg_xyz", "nor_this_one"]'), RuntimeError),
])
def test_local_errors_are_torchs(tmp_path, model, hubconf, exc):
    repo = str(_repo(tmp_path / "repo", hubconf))
    with pytest.raises(exc) as ours:
        hub.load(repo, model, 2, source="local")
    with pytest.raises(exc) as theirs:
        torch.hub.load(repo, model, 2, source="local")
    assert str(ours.value) == str(theirs.value)


def test_unknown_source_is_refused_with_torchs_words(tmp_path):
    with pytest.raises(ValueError) as ours:
        hub.load(str(tmp_path), "x", source="gitlab")
    with pytest.raises(ValueError) as theirs:
        torch.hub.load(str(tmp_path), "x", source="gitlab")
    assert str(ours.value) == str(theirs.value) == 'Unknown source: "gitlab". Allowed values: "github" | "local".'


# --- hubconf from "GitHub" (served locally) ------------------------------------------------------------------
def _zipball(tmp_path, top="owner-repo-abc123", hubconf=HUBCONF, extra=()):
    src = _repo(tmp_path / "src_repo", hubconf)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(top + "/", "")
        for f in sorted(src.iterdir()):
            z.writestr(f"{top}/{f.name}", f.read_bytes())
        for name, body in extra:
            z.writestr(name, body)
    return buf.getvalue()


@pytest.fixture
def github(server, monkeypatch):
    monkeypatch.setattr(hub, "_github_base", server.url)
    monkeypatch.setattr(hub, "_github_api_base", server.url + "/api")
    return server


def _serve_repo(github, tmp_path, owner="owner", repo="repo", ref="main", **kw):
    github.routes[f"/{owner}/{repo}/zipball/{ref}"] = (200, _zipball(tmp_path, **kw))
    branches = json.dumps([{"name": ref, "commit": {"sha": "abc123"}}]).encode()
    github.routes[f"/api/repos/{owner}/{repo}/branches?per_page=100&page=1"] = (200, branches)
    github.routes[f"/api/repos/{owner}/{repo}/branches?per_page=100&page=2"] = (200, b"[]")


def test_github_load_downloads_once_into_owner_repo_branch(tmp_path, github, hub_dir, capsys):
    github.routes["/owner/repo/tree/main/"] = (200, b"ok")
    _serve_repo(github, tmp_path)
    assert hub.load("owner/repo", "tiny", 2, trust_repo=True) == [0.0, 2.0]
    assert (hub_dir / "owner_repo_main" / "hubconf.py").exists()
    assert (hub_dir / "trusted_list").read_text() == "owner_repo\n"
    assert sorted(os.listdir(hub_dir)) == ["owner_repo_main", "trusted_list"]    # the zip is removed
    assert '/owner/repo/zipball/main" to ' in capsys.readouterr().out
    # the second time: from the cache, no download, no prompt
    del github.routes["/owner/repo/zipball/main"]
    assert hub.load("owner/repo", "tiny", 3, scale=0.5) == [0.0, 1.0, 2.0]
    assert f"Using cache found in {hub_dir / 'owner_repo_main'}" in capsys.readouterr().err
    assert hub.list("owner/repo:main") == ["tiny"]
    assert hub.help("owner/repo:main", "tiny") == "Return a list of n scaled numbers."
    # force_reload downloads again
    _serve_repo(github, tmp_path)
    n = len(github.requests)
    hub.load("owner/repo:main", "tiny", 1, force_reload=True, skip_validation=True)
    assert [p for p, _ in github.requests[n:]] == ["/owner/repo/zipball/main"]


def test_github_default_branch_is_master_without_main(tmp_path, github, hub_dir):
    _serve_repo(github, tmp_path, ref="master")              # /owner/repo/tree/main/ answers 404
    assert hub.load("owner/repo", "tiny", 1, trust_repo=True) == [0.0]
    assert (hub_dir / "owner_repo_master").is_dir()


def test_branch_with_a_slash_is_normalized(tmp_path, github, hub_dir):
    github.routes["/owner/repo/zipball/feat/x"] = (200, _zipball(tmp_path))
    hub.load("owner/repo:feat/x", "tiny", 1, trust_repo=True, skip_validation=True)
    assert (hub_dir / "owner_repo_feat_x").is_dir()


@pytest.mark.parametrize("answer,outcome", [("y", None), ("YES", None), ("n", Exception), ("", Exception),
                                            ("maybe", ValueError)])
def test_trust_prompt(tmp_path, github, hub_dir, monkeypatch, answer, outcome):
    _serve_repo(github, tmp_path)
    asked = []
    monkeypatch.setattr("builtins.input", lambda prompt: asked.append(prompt) or answer)
    if outcome is None:
        assert hub.load("owner/repo:main", "tiny", 1) == [0.0]
        assert (hub_dir / "trusted_list").read_text() == "owner_repo\n"
    else:
        with pytest.raises(outcome, match="Untrusted repository." if outcome is Exception
                           else f"Unrecognized response {answer}."):
            hub.load("owner/repo:main", "tiny", 1)
        assert not (hub_dir / "owner_repo_main").exists()
    assert asked == ["The repository owner_repo does not belong to the list of trusted repositories and as such "
                     "cannot be downloaded. Do you trust this repository and wish to add it to the trusted list of "
                     "repositories (y/N)?"]


def test_trusted_owners_and_trusted_list_are_not_asked(tmp_path, github, hub_dir, monkeypatch):
    monkeypatch.setattr("builtins.input", lambda prompt: pytest.fail("asked"))
    _serve_repo(github, tmp_path, owner="pytorch", repo="vision")
    assert hub.load("pytorch/vision:main", "tiny", 1) == [0.0]
    _serve_repo(github, tmp_path, owner="someone", repo="models")
    hub_dir.mkdir(exist_ok=True)
    with open(hub_dir / "trusted_list", "a") as f:
        f.write("someone_models\n")
    assert hub.load("someone/models:main", "tiny", 1) == [0.0]
    # trust_repo=False asks even for a trusted repository
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    assert hub.load("someone/models:main", "tiny", 1, trust_repo=False) == [0.0]


def test_a_ref_not_in_the_repository_is_refused(tmp_path, github, hub_dir):
    _serve_repo(github, tmp_path)
    github.routes["/api/repos/owner/repo/tags?per_page=100&page=1"] = (200, b"[]")
    with pytest.raises(ValueError, match="Cannot find v9 in https://github.com/owner/repo. If it's a commit from a "
                                         "forked repo, please call hub.load\\(\\) with forked repo directly."):
        hub.load("owner/repo:v9", "tiny", 1, trust_repo=True)
    # a commit of the repository is found by its sha prefix
    github.routes["/owner/repo/zipball/abc1"] = (200, _zipball(tmp_path))
    assert hub.load("owner/repo:abc1", "tiny", 1, trust_repo=True) == [0.0]


@pytest.mark.parametrize("repo", ["noslash", "a/b/c"])
def test_a_bad_repo_string_fails_with_torchs_words(hub_dir, repo):
    with pytest.raises(ValueError) as theirs:
        torch.hub.load(repo + ":main", "x", trust_repo=True)
    with pytest.raises(ValueError) as ours:
        hub.load(repo + ":main", "x", trust_repo=True)
    assert str(ours.value).startswith(str(theirs.value))
    assert "repo_owner/repo_name[:ref]" in str(ours.value)


def test_an_archive_escaping_the_hub_dir_is_refused(tmp_path, github, hub_dir):
    _serve_repo(github, tmp_path, extra=[("owner-repo-abc123/../../escaped.txt", b"x")])
    with pytest.raises(ValueError, match="Archive entry contains directory traversal"):
        hub.load("owner/repo:main", "tiny", 1, trust_repo=True)
    assert not (tmp_path / "escaped.txt").exists()


def test_no_connection_falls_back_on_the_cache(tmp_path, hub_dir, monkeypatch):
    monkeypatch.setattr(hub, "_github_base", "http://127.0.0.1:9")       # nothing listens on the discard port
    with pytest.raises(RuntimeError, match="no internet connection and the repo could not be found in the cache"):
        hub.load("owner/repo", "tiny", 1, trust_repo=True)
    _repo(hub_dir / "owner_repo_master")
    assert hub.load("owner/repo", "tiny", 2, trust_repo=True) == [0.0, 2.0]
