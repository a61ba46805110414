"""``metascore bundle env | runtime``: the two caches the other bundle commands draw on, the
local backend's environments of the images (:mod:`metascore.bundle.worker.pyenv`) and the
meta-scoring program's own Python (:mod:`metascore.bundle.runtime.store`). Their options are
parsed with the other bundle commands' (:mod:`metascore.cli.bundle`)."""

from __future__ import annotations

import argparse
import tempfile
import zipfile
from pathlib import Path

from ..errors import InputError

__all__ = ["cmd_env", "cmd_runtime"]


def cmd_env(args: argparse.Namespace) -> int:
    """``metascore bundle env``: build, list or remove the environments of the images."""
    from ..bundle.archive import extract_bundle
    from ..bundle.worker.pyenv import build_env, cache_root, list_envs, packages_for, read_requirements, remove_envs
    from ..bundle.schema.load import load_competition

    if args.list or args.remove:
        if args.bundle or args.requirements or args.image or (args.list and args.remove):
            args.parser.error("--list and --remove take no bundle and no other option")
        if args.remove:
            for env in remove_envs(args.remove):
                print(f"removed {env.path} ({', '.join(env.images) or 'no image recorded'}, "
                      f"{env.size / 1e6:.0f} MB)")
            return 0
        envs = list_envs()
        for env in envs:
            state = "" if env.complete else " (half-built: rebuilt when used)"
            print(f"{', '.join(env.images) or '(no image recorded)'}: {env.size / 1e6:.0f} MB, "
                  f"{env.path}{state}")
        print(f"{len(envs)} environment(s), {sum(e.size for e in envs) / 1e6:.0f} MB, in "
              f"{cache_root() / 'envs'} ($METASCORE_CACHE or $XDG_CACHE_HOME moves it)")
        return 0
    if args.bundle is None:
        args.parser.error("give a bundle folder or zip (or --list, or --remove IMAGE)")
    image = args.image
    if image is None:
        path = Path(args.bundle)
        with tempfile.TemporaryDirectory(prefix="metascore-env-") as tmp:
            if path.is_file() and zipfile.is_zipfile(path):
                extract_bundle(path, tmp)
                path = Path(tmp)
            elif not path.is_dir():
                raise InputError(f"{path}: no such bundle folder or zip file.")
            image = load_competition(path).docker_image
    packages = read_requirements(args.requirements) if args.requirements else packages_for(image)
    if packages is None:
        raise InputError(f"no package list ships for the image {image!r}: write its Python "
                         "packages in a requirements file and pass --requirements FILE.")
    env = build_env(image, packages, system_site_packages=args.system_site_packages,
                    log=lambda line: print(line, flush=True))
    print(f"environment for {image}: {env} (python: {env / 'bin' / 'python'}); "
          "`metascore bundle run` uses it for this image.")
    return 0


def cmd_runtime(args: argparse.Namespace) -> int:
    """``metascore bundle runtime``: build (and pack as a wheel), list or remove the
    meta-scoring program's own Python."""
    from .._version import __version__
    from ..bundle.runtime.store import (ensure_runtime, find_runtime, list_runtimes, remove_runtimes,
                                       runtime_cache)
    from ..bundle.runtime.wheel import write_wheel

    if args.action == "build":
        built = ensure_runtime(lambda line: print(line, flush=True), rebuild=args.rebuild)
        print(built.summary())
        if args.wheel:
            wheel = write_wheel(built.tree, built.zip, built.manifest, Path(args.wheel), __version__)
            print(f"wrote {wheel}, {wheel.stat().st_size / 1e6:.1f} MB")
    elif args.action == "list":
        found, used = list_runtimes(), find_runtime()
        for runtime in found:
            mark = " [used by bundle zip, run and add-meta]" if used is not None and runtime == used else ""
            print(runtime.summary() + mark)
        if not found:
            print(f"no installed wheel and no build in {runtime_cache()}; `pip install "
                  "'metascore[runtime]'` installs it, `metascore bundle runtime build` builds it "
                  "(bundle zip and run do when they need it).")
    else:
        if args.wheel:
            args.parser.error("--wheel goes with build")
        removed = remove_runtimes(everything=args.all)
        print("\n".join(f"removed {path}" for path in removed) or f"nothing to remove in {runtime_cache()}.")
    return 0
