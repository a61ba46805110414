# The metascore image: the meta-scoring program's runtime for Codabench / CodaLab
# (`docker_image:` in competition.yaml) and for `metascore bundle run --backend docker`.
#
#   docker build -t metascore .                                   # python:3.12-slim
#   docker build --build-arg BASE_IMAGE=python:3.11-slim -t metascore .
#   docker build --build-arg VERSION=0.1.0 -t metascore:0.1.0 .   # a release (labels)
#
# Inside: python3 (a virtual environment first on PATH) with metascore and its pinned
# dependencies; working directory /app/program, as the compute worker expects. VERSION goes
# into the image's labels; the build fails unless it is the package's own version
# (src/metascore/_version.py), or "dev" (the default, for a build of any checkout).
ARG BASE_IMAGE=python:3.12-slim

# --- deps: a venv with the pinned dependencies (rebuilt only when they change) ------------
FROM ${BASE_IMAGE} AS deps
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
RUN python3 -m venv /opt/venv
COPY requirements-docker.txt /tmp/
# Wheels only (no compiler needed); the libraries' own test suites (~95 MB) are dropped, and
# so is the setuptools some Python versions seed into a venv (nothing needs it at run time).
RUN /opt/venv/bin/pip install --no-cache-dir --only-binary=:all: -r /tmp/requirements-docker.txt \
 && /opt/venv/bin/pip uninstall --yes --quiet setuptools \
 && cd /opt/venv/lib/python3*/site-packages \
 && find numpy scipy pandas -depth -type d -name tests -exec rm -rf {} +

# --- wheel: metascore built from the sources ----------------------------------------------
FROM deps AS wheel
COPY pyproject.toml setup.py README.md /tmp/build/
COPY src /tmp/build/src
RUN /opt/venv/bin/pip wheel --no-cache-dir --no-deps --wheel-dir /tmp/wheel /tmp/build

# --- runtime: the venv and the installed wheel (no sources, build tools or pip cache) -----
FROM ${BASE_IMAGE}
ENV PATH=/opt/venv/bin:$PATH \
    VIRTUAL_ENV=/opt/venv \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
COPY --from=deps /opt/venv /opt/venv
COPY --from=wheel /tmp/wheel /tmp/wheel
# A non-root account for standalone use (`docker run --user metascore ...`; build with
# `--build-arg RUN_AS=metascore` to make it the default). The default stays root because
# the compute worker runs the image's default user with DAC_OVERRIDE/CHOWN/FOWNER/SETUID
# dropped on job directories it creates root-owned with mode 0755: only the container's
# root (their owner) can write /app/output there, under docker and rootless podman alike.
ARG RUN_AS=root
ARG VERSION=dev
LABEL org.opencontainers.image.title="metascore" \
      org.opencontainers.image.description="Meta-scoring for machine-learning competitions: the metascore package and its meta-scoring program" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN pip install --no-deps /tmp/wheel/*.whl \
 && rm -rf /tmp/wheel \
 && pip check \
 && useradd --uid 1000 --create-home --shell /bin/sh metascore \
 && python3 -c "import sys, metascore, numpy, pandas, scipy, yaml; v = metascore.__version__; \
sys.exit(None if '${VERSION}' in ('dev', v) else f'--build-arg VERSION=${VERSION} is not the package version {v}')"
WORKDIR /app/program
USER ${RUN_AS}
CMD ["python3", "-m", "metascore", "--help"]
