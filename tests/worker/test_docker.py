"""The metascore image and the Docker backend of the mock bundle runner.

Tests marked ``engine`` need a Docker-compatible engine at ``DOCKER_HOST`` and are skipped,
with the reason, when none answers (under ``CI=true`` they fail: :mod:`requirements`). The image is built from the repository's Dockerfile
once per source change (``tests/engine.py``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml

import metascore
from engine import build_image
from metascore.bundle.worker import docker_backend
from metascore.bundle.worker.backend import Mount, StepSpec
from metascore.bundle.worker.docker_backend import STEP_LABEL, WORKER_CAP_DROP, DockerBackend, connect
from metascore.bundle.worker.limits import Limits
from metascore.bundle.runner import RunReport, run_bundle
from metascore.errors import ConfigError, MetascoreError
from requirements import require_engine
from repo_paths import ROOT

FIXTURE = ROOT / "tests" / "data" / "competition"
SCORING = ROOT / "scoring_program"
OUTPUTS = {"scores.json", "scores.txt", "leaderboard.csv", "leaderboard.json", "detailed_results.html"}
CONFIG = """\
input: {path: long.csv}
judges:
  - {task: iris, metric: accuracy}
  - {task: wine, metric: mae, sorting: asc}
  - {task: digits, metric: f1}
selection: {development: best, final: best}
baselines: [organizers]
filter: {rule: beat_baseline, beat: any}
output:
  scores:
    n_qualified: n_qualified
    winner_score: winner_score
    condorcet: winner_is_condorcet
"""


# ----------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def image() -> str:
    require_engine()
    return build_image("metascore:test")


@pytest.fixture(scope="module")
def backend(image) -> DockerBackend:
    return DockerBackend(image=image, memory="512m")


def _step(command: str, *mounts: Mount, limit: float = 60.0, name: str | None = None) -> StepSpec:
    return StepSpec(name=name or f"test-{uuid.uuid4().hex[:12]}", command=command, mounts=mounts,
                    time_limit=limit)


def _containers(name: str) -> list:
    return connect().containers.list(all=True, filters={"label": f"{STEP_LABEL}={name}"})


def _worker_dirs(tmp_path: Path, program: Path) -> dict[str, Path]:
    """The scoring job's folders as the worker lays them out (host side)."""
    root = tmp_path / "job"
    shutil.copytree(program, root / "program")
    for d in ("input/ref", "input/res", "output", "shared", "data"):
        (root / d).mkdir(parents=True)
    return {"program": root / "program", "input": root / "input", "output": root / "output",
            "shared": root / "shared", "data": root / "data"}


def _scoring_step(dirs: dict[str, Path]) -> StepSpec:
    command = yaml.safe_load((dirs["program"] / "metadata.yaml").read_text())["command"]
    mounts = (
        Mount("/app/program", dirs["program"]), Mount("/app/output", dirs["output"]),
        Mount("/app/data", dirs["data"], read_only=True), Mount("/app/input", dirs["input"]),
        Mount("/app/shared", dirs["shared"]),
    )
    return StepSpec(name=f"scoring-{uuid.uuid4().hex[:12]}", command=command, mounts=mounts, time_limit=300)


def _fill_inputs(dirs: dict[str, Path]) -> None:
    """The configuration and a results export signed with the organizer's key, whose public
    half the program carries, as `bundle zip` fills it (issue 46)."""
    from organizer import sign_as_organizer

    (dirs["input"] / "ref" / "metascore.yaml").write_text(CONFIG)
    shutil.copy(FIXTURE / "long.csv", dirs["input"] / "res" / "long.csv")
    sign_as_organizer(dirs["input"], dirs["program"])


# ----------------------------------------------------------------------------- no engine needed
class FakeClient:
    """Just enough of docker.DockerClient to build container settings."""

    def __init__(self, podman: bool = False, rootless: bool = False) -> None:
        self._podman, self._rootless = podman, rootless

    def version(self):
        return {"Components": [{"Name": "Podman Engine" if self._podman else "Engine"}]}

    def info(self):
        rootless = ["name=rootless"] if self._rootless else []
        return {"SecurityOptions": ["name=seccomp,profile=default", *rootless]}

    class images:  # noqa: N801 - mimics client.images
        @staticmethod
        def get(name):
            return name


def test_container_settings_follow_the_worker(tmp_path):
    mounts = (Mount("/app/program", tmp_path), Mount("/app/data", tmp_path / "d", read_only=True))
    step = StepSpec(name="scoring", command="python3 /app/program/score.py '/app/input' /app/output",
                    mounts=mounts, image="from/step:1")
    config = DockerBackend(client=FakeClient())._container_config(step)
    assert config["command"] == ["python3", "/app/program/score.py", "/app/input", "/app/output"]
    assert config["image"] == "from/step:1"
    assert config["working_dir"] == "/app/program"
    assert config["environment"] == {"PYTHONUNBUFFERED": "1"}
    assert [(m["Target"], m["Source"], m["Type"], m["ReadOnly"]) for m in config["mounts"]] == [
        ("/app/program", str(tmp_path.resolve()), "bind", False),
        ("/app/data", str((tmp_path / "d").resolve()), "bind", True),
    ]
    assert config["cap_drop"] == list(WORKER_CAP_DROP) and len(WORKER_CAP_DROP) == 14
    assert config["security_opt"] == ["no-new-privileges"]
    assert config["network_mode"] == "none"
    assert config["mem_limit"] == "2g" and config["pids_limit"] == 256  # the default limits
    assert "ulimits" not in config  # podman would then add its own, above what it may grant
    assert config["log_config"]["Type"] == "none"  # output read through the attach stream only
    assert config["labels"] == {STEP_LABEL: "scoring"}
    if hasattr(os, "getuid"):
        assert config["user"] == f"{os.getuid()}:{os.getgid()}"


def test_container_settings_options_and_engines(tmp_path):
    step = StepSpec(name="s", command="true", mounts=(Mount("/app/program", tmp_path),), image="from/step:1")
    podman = FakeClient(podman=True, rootless=True)
    config = DockerBackend(image="override:2", network=True, memory=None, client=podman)._container_config(step)
    assert config["image"] == "override:2"
    assert config["security_opt"] == ["no-new-privileges", "label=disable"]
    assert "network_mode" not in config and "mem_limit" not in config
    assert config["user"] == "0:0"  # the container's root is the host user on a rootless engine
    # under podman the mounts are nosuid,nodev (binds: Docker's API has no such option)
    assert "mounts" not in config and config["binds"] == [f"{tmp_path.resolve()}:/app/program:rw,nosuid,nodev"]
    assert "user" not in DockerBackend(client=FakeClient(), user=None)._container_config(step)
    assert DockerBackend(client=FakeClient(), user="1000:1000")._container_config(step)["user"] == "1000:1000"


def test_both_backends_have_every_member_of_the_protocol(monkeypatch):
    """The runner calls ``notice`` and ``describe`` on any backend, without looking first."""
    from metascore.bundle.worker.backend import Backend
    from metascore.bundle.worker.local import LocalBackend

    members = set(Backend.__annotations__) | {n for n in vars(Backend) if not n.startswith("_")}
    assert {"name", "notice", "describe", "run", "run_many"} <= members
    monkeypatch.setenv("DOCKER_HOST", "unix:///run/engine.sock")
    docker = DockerBackend(client=FakeClient(podman=True, rootless=True))
    for backend in (LocalBackend(sandbox="rewrite"), docker):
        assert [m for m in sorted(members) if not hasattr(backend, m)] == [], type(backend).__name__
    assert docker.notice == ""
    assert docker.describe("from/bundle:1") == (
        "docker backend: the programs run in containers of from/bundle:1 on podman (rootless) "
        "(DOCKER_HOST=unix:///run/engine.sock)")
    assert "containers of override:2 on Docker (" in DockerBackend(
        image="override:2", client=FakeClient()).describe("from/bundle:1")


def test_bad_steps_are_config_errors(tmp_path):
    backend = DockerBackend(client=FakeClient())
    mounts = (Mount("/app/program", tmp_path),)
    with pytest.raises(ConfigError, match=r"^scoring: no docker image; set docker_image"):
        backend._container_config(StepSpec(name="scoring", command="true", mounts=mounts))
    with pytest.raises(ConfigError, match=r"^scoring: command 'python3 \"x' cannot be split"):
        backend._container_config(StepSpec(name="scoring", command='python3 "x', mounts=mounts, image="i"))
    with pytest.raises(ConfigError, match=r"^scoring: the command is empty"):
        backend._container_config(StepSpec(name="scoring", command="  ", mounts=mounts, image="i"))


def test_unreachable_engine_names_docker_host(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    where = rf"DOCKER_HOST=unix://{tmp_path}/no-engine.sock"
    with pytest.raises(MetascoreError, match=rf"no container engine is reachable \({where}\)"):
        DockerBackend()


def test_missing_sdk_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "docker", None)
    with pytest.raises(MetascoreError, match=r"SDK: pip install 'metascore\[docker\]'\.$"):
        connect()


# ----------------------------------------------------------------------------- the image
PROBE = """\
import json, os, shutil, subprocess, sys
import metascore, numpy, pandas, scipy, yaml
cli = subprocess.run(["python3", "-m", "metascore", "--version"], capture_output=True, text=True)
print(json.dumps({
    "python": shutil.which("python3"), "prefix": sys.prefix, "cwd": os.getcwd(), "cli": cli.stdout,
    "compilers": [c for c in ("gcc", "cc", "make") if shutil.which(c)],
    "pip_cache": any(os.path.exists(os.path.expanduser(h) + "/.cache/pip") for h in ("~", "~root")),
    "sources": os.path.exists("/tmp/build"),
    "versions": [numpy.__version__, scipy.__version__, pandas.__version__, yaml.__version__],
}))
"""


@pytest.mark.engine
def test_image_contents(backend, tmp_path):
    (tmp_path / "probe.py").write_text(PROBE)
    as_image_user = DockerBackend(image=backend.image, user=None)
    result = as_image_user.run(_step("python3 probe.py", Mount("/app/program", tmp_path)))
    assert result.exit_code == 0, result.stderr
    pins = dict(line.split("==") for line in (ROOT / "requirements-docker.txt").read_text().splitlines()
                if "==" in line)
    assert json.loads(result.stdout) == {
        "python": "/opt/venv/bin/python3", "prefix": "/opt/venv", "cwd": "/app/program",
        "cli": f"metascore {metascore.__version__}\n", "compilers": [], "pip_cache": False, "sources": False,
        "versions": [pins["numpy"], pins["scipy"], pins["pandas"], pins["pyyaml"]],
    }


@pytest.mark.engine
def test_image_users(backend, tmp_path):
    """Root by default (what the worker's permissions need), a non-root account available."""
    attrs = connect().images.get(backend.image).attrs
    assert attrs["Config"].get("User") in ("", "root", None)
    as_user = DockerBackend(image=backend.image, user="metascore").run(
        _step("id -un", Mount("/app/program", tmp_path)))
    assert (as_user.exit_code, as_user.stdout) == (0, "metascore\n")


# ----------------------------------------------------------------------------- (a) scoring program
@pytest.mark.engine
def test_scoring_program_in_the_image_as_the_worker_runs_it(backend, tmp_path):
    dirs = _worker_dirs(tmp_path, SCORING)
    _fill_inputs(dirs)
    result = backend.run(_scoring_step(dirs))
    assert result.exit_code == 0, result.stderr
    assert not result.timed_out
    assert "[*] winner: dave-105" in result.stdout
    out = dirs["output"]
    assert {p.name for p in out.iterdir()} == OUTPUTS
    scores = json.loads((out / "scores.json").read_text())
    assert scores["n_qualified"] == 2
    assert scores["condorcet"] == 1
    assert scores["winner_score"] == pytest.approx(7 / 6)  # the average rank
    for path in out.iterdir():  # the host user owns what the container wrote
        assert path.stat().st_uid == os.getuid()

    # the same program run here with this Python gives the same scores and leaderboard
    local = _worker_dirs(tmp_path / "local", SCORING)
    _fill_inputs(local)
    proc = subprocess.run([sys.executable, str(local["program"] / "score.py"), str(local["input"]),
                           str(local["output"])], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((local["output"] / "scores.json").read_text()) == scores
    assert (local["output"] / "leaderboard.csv").read_text() == (out / "leaderboard.csv").read_text()
    shutil.rmtree(dirs["output"])


@pytest.mark.engine
def test_scoring_program_bad_config_fails_with_one_line(backend, tmp_path):
    dirs = _worker_dirs(tmp_path, SCORING)
    _fill_inputs(dirs)
    (dirs["input"] / "ref" / "metascore.yaml").write_text(CONFIG.replace("mae", "maee"))
    result = backend.run(_scoring_step(dirs))
    assert result.exit_code == 1
    assert result.stderr.startswith("metascore: error: ")
    assert "maee" in result.stderr
    assert not (dirs["output"] / "scores.json").exists()


@pytest.mark.engine
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="needs root on the host to create root-owned job folders as the worker does")
def test_image_default_user_writes_worker_folders(backend, tmp_path):
    """The worker's own settings: the image's user, folders root-owned 0755, capabilities dropped."""
    dirs = _worker_dirs(tmp_path, SCORING)
    _fill_inputs(dirs)
    for path in dirs.values():
        path.chmod(0o755)
    result = DockerBackend(image=backend.image, user=None).run(_scoring_step(dirs))
    assert result.exit_code == 0, result.stderr
    assert (dirs["output"] / "scores.json").is_file()
    # a non-root default user could not have written there
    denied = DockerBackend(image=backend.image, user="metascore").run(
        _step("python3 -c \"open('/app/output/x', 'w')\"", Mount("/app/program", dirs["program"]),
              Mount("/app/output", dirs["output"])))
    assert denied.exit_code == 1
    assert "PermissionError: [Errno 13] Permission denied: '/app/output/x'" in denied.stderr


# ----------------------------------------------------------------------------- (b) backend scenarios
@pytest.mark.engine
def test_success_captures_stdout_and_stderr_separately(backend, tmp_path):
    result = backend.run(_step(
        "python3 -c 'import sys; print(\"to out\"); print(\"to err\", file=sys.stderr)'",
        Mount("/app/program", tmp_path)))
    assert (result.exit_code, result.timed_out) == (0, False)
    assert (result.stdout, result.stderr) == ("to out\n", "to err\n")
    assert result.elapsed > 0


@pytest.mark.engine
def test_failure_exit_code_and_stderr(backend, tmp_path):
    (tmp_path / "boom.py").write_text("raise SystemExit('bad input: judge wine')\n")
    result = backend.run(_step("python3 boom.py", Mount("/app/program", tmp_path)))
    assert (result.exit_code, result.timed_out) == (1, False)
    assert result.stderr == "bad input: judge wine\n"


@pytest.mark.engine
def test_no_shell_and_missing_executable(backend, tmp_path):
    echoed = backend.run(_step("echo $HOME && ls", Mount("/app/program", tmp_path)))
    assert (echoed.exit_code, echoed.stdout) == (0, "$HOME && ls\n")
    missing = backend.run(_step("no-such-program --flag", Mount("/app/program", tmp_path)))
    assert missing.exit_code == 127
    assert "no-such-program" in missing.stderr


@pytest.mark.engine
def test_time_limit_kills_and_removes_the_container(backend, tmp_path):
    name = f"slow-{uuid.uuid4().hex[:12]}"
    result = backend.run(_step("python3 -c 'import time; print(\"started\", flush=True); time.sleep(120)'",
                               Mount("/app/program", tmp_path), limit=3, name=name))
    assert result.timed_out and result.exit_code is None
    assert result.stdout == "started\n"
    assert 3 <= result.elapsed < 30
    assert _containers(name) == []


@pytest.mark.engine
def test_run_many_runs_steps_concurrently_under_one_timer(backend, tmp_path):
    """Each step waits for the other's file: only concurrent steps can both finish."""
    (tmp_path / "meet.py").write_text(
        "import os, pathlib, sys, time\n"
        "me, other = sys.argv[1:]\n"
        "pathlib.Path('/app/shared', me).touch()\n"
        "while not os.path.exists(os.path.join('/app/shared', other)):\n"
        "    time.sleep(0.05)\n"
        "print(me, 'done')\n"
    )
    mounts = (Mount("/app/program", tmp_path), Mount("/app/shared", tmp_path))
    a, b = _step("python3 meet.py a b", *mounts), _step("python3 meet.py b a", *mounts)
    ra, rb = backend.run_many([a, b], time_limit=60)
    assert (ra.exit_code, ra.stdout, rb.exit_code, rb.stdout) == (0, "a done\n", 0, "b done\n")

    # one shared timer: the step that ends in time keeps its result, the other is killed
    fast = _step("python3 -c 'print(1)'", Mount("/app/program", tmp_path))
    slow_name = f"slow-{uuid.uuid4().hex[:12]}"
    slow = _step("python3 -c 'import time; time.sleep(120)'", Mount("/app/program", tmp_path), name=slow_name)
    rf, rs = backend.run_many([fast, slow], time_limit=4)
    assert (rf.exit_code, rf.timed_out, rf.stdout) == (0, False, "1\n")
    assert (rs.exit_code, rs.timed_out) == (None, True)
    assert _containers(slow_name) == [] and _containers(fast.name) == []


@pytest.mark.engine
def test_network_is_disabled_by_default(backend, tmp_path):
    (tmp_path / "probe.py").write_text(
        "import os, socket\n"
        "print(sorted(os.listdir('/sys/class/net')))\n"
        "try:\n"
        "    socket.create_connection(('1.1.1.1', 53), timeout=5)\n"
        "except OSError as exc:\n"
        "    print('refused', exc.errno)\n"
    )
    result = backend.run(_step("python3 probe.py", Mount("/app/program", tmp_path)))
    assert result.exit_code == 0, result.stderr
    interfaces, outcome = result.stdout.splitlines()
    assert interfaces == "['lo']"
    assert outcome.startswith("refused")


@pytest.mark.engine
def test_read_only_mounts_are_enforced(backend, tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "keep.txt").write_text("original")
    result = backend.run(_step(
        "python3 -c \"open('/app/data/keep.txt', 'w').write('changed')\"",
        Mount("/app/program", tmp_path), Mount("/app/data", tmp_path / "data", read_only=True)))
    assert result.exit_code == 1
    assert "Read-only file system" in result.stderr
    assert (tmp_path / "data" / "keep.txt").read_text() == "original"


@pytest.mark.engine
def test_files_written_in_mounts_belong_to_the_host_user(backend, tmp_path):
    out = tmp_path / "output"
    out.mkdir()
    (tmp_path / "write.py").write_text(
        "import os\nos.makedirs('/app/output/sub/deep')\nopen('/app/output/sub/deep/f.txt', 'w').write('x')\n")
    result = backend.run(_step("python3 write.py", Mount("/app/program", tmp_path), Mount("/app/output", out)))
    assert result.exit_code == 0, result.stderr
    written = [out / "sub", out / "sub" / "deep", out / "sub" / "deep" / "f.txt"]
    assert [(p.stat().st_uid, p.stat().st_gid) for p in written] == [(os.getuid(), os.getgid())] * 3
    assert (out / "sub" / "deep" / "f.txt").read_text() == "x"
    shutil.rmtree(out / "sub")
    assert list(out.iterdir()) == []


@pytest.mark.engine
@pytest.mark.parametrize("where", ["folder", "engine"])
def test_the_containers_own_layer_counts_in_the_disk_limit(image, tmp_path, monkeypatch, where):
    """Issue 42, 5: what a container writes outside its mounts (its /tmp) is counted, read in
    the engine's folder of the layer where the runner may, else as the engine reports it."""
    if where == "engine":
        monkeypatch.setattr(docker_backend, "_layer_folder", lambda container: None)
    backend = DockerBackend(image=image, limits=Limits(memory=256 << 20, processes=50, disk=20 << 20))
    fill = ("import time\nfor i in range(30):\n    open(f'/tmp/fill{i}', 'wb').write(b'x' * (10 << 20))\n"
            "time.sleep(10)\nprint('done')\n")
    (tmp_path / "fill.py").write_text(fill)
    result = backend.run(_step("python3 fill.py", Mount("/app/program", tmp_path), limit=60))
    assert (result.killed, result.exit_code) == ("disk", None), result.stderr
    assert result.message == Limits(disk=20 << 20).message("disk") and "done" not in result.stdout
    # a set-user-ID file in a mount gives nothing in the container (nosuid, no-new-privileges)
    if os.geteuid() == 0 and shutil.which("id"):
        shutil.copy(shutil.which("id"), tmp_path / "idsh")
        os.chown(tmp_path / "idsh", 65534, 65534)
        (tmp_path / "idsh").chmod(0o4755)
        result = backend.run(_step("./idsh -u", Mount("/app/program", tmp_path)))
        assert (result.exit_code, result.stdout.strip()) == (0, "0"), result.stderr


@pytest.mark.engine
def test_memory_limit_kills_with_a_reason(image, tmp_path):
    result = DockerBackend(image=image, memory="64m").run(
        _step("python3 -c 'x = bytearray(400 * 2**20); print(len(x))'", Mount("/app/program", tmp_path)))
    assert result.exit_code == 137
    assert not result.timed_out
    assert "memory" in result.stderr and "64m" in result.stderr


@pytest.mark.engine
def test_containers_are_removed_after_an_error(backend, tmp_path, monkeypatch):
    first, second = (_step("true", Mount("/app/program", tmp_path)) for _ in range(2))
    started = []

    def start_then_fail(run):
        if started:
            raise RuntimeError("engine went away")
        started.append(run)
        run.container.start()

    monkeypatch.setattr(docker_backend._Run, "start", start_then_fail)
    with pytest.raises(RuntimeError, match="engine went away"):
        backend.run_many([first, second], time_limit=30)
    assert _containers(first.name) == [] and _containers(second.name) == []


@pytest.mark.engine
def test_missing_image_is_a_clear_error(tmp_path):
    require_engine()
    missing = DockerBackend(image="localhost/metascore-missing:none")
    with pytest.raises(MetascoreError, match=r"image 'localhost/metascore-missing:none' is not on this engine "
                                             r"and cannot be pulled"):
        missing.run(_step("true", Mount("/app/program", tmp_path)))


# ----------------------------------------------------------------------------- (c) runner parity
BUNDLES = ROOT / "tests" / "data" / "bundles"


def _run_summary(report: RunReport) -> dict:
    """What a run decided, without timings or host paths."""
    outputs = report.out / "outputs"
    return {
        "jobs": sorted((r.phase, r.candidate, r.task, r.status, r.status_details,
                        json.dumps(r.scores, sort_keys=True), json.dumps(r.computed, sort_keys=True))
                       for r in report.results),
        "meta": None if report.meta is None else (report.meta.status, report.meta.scores),
        "leaderboard": None if report.leaderboard is None else report.leaderboard.read_text(),
        "outputs": {str(p.relative_to(outputs)): p.read_text()
                    for p in sorted(outputs.rglob("*")) if p.is_file()},
    }


def _parity(bundle: Path, tmp_path: Path, image: str) -> dict:
    local = _run_summary(run_bundle(bundle, tmp_path / "local", backend="local"))
    docker = _run_summary(run_bundle(bundle, tmp_path / "docker", backend="docker", image=image))
    assert docker == local
    for path in (tmp_path / "docker").rglob("*"):  # everything the containers wrote is ours
        assert path.stat().st_uid == os.getuid(), path
    shutil.rmtree(tmp_path / "docker")
    return local


@pytest.mark.engine
@pytest.mark.parametrize("name", ["v2_results", "v2_shared", "v1_computed", "failures"])
def test_runner_scenarios_give_the_same_results_on_both_backends(name, image, tmp_path):
    summary = _parity(BUNDLES / name, tmp_path, image)
    assert summary["jobs"]  # the scenario ran something


@pytest.mark.engine
@pytest.mark.slow
def test_bundle_template_gives_the_same_leaderboard_on_both_backends(image, tmp_path):
    summary = _parity(ROOT / "bundle_template", tmp_path, image)
    assert summary["meta"][0] == "Finished"
    assert summary["leaderboard"].startswith("position,")
