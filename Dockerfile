# Attention Explorer as a container: CPU-only torch, the production Streamlit profile, a health check.
#   docker build -t attention-explorer .
#   docker run --rm -p 8501:8501 attention-explorer        # then open http://localhost:8501
# Works as is on Hugging Face Spaces (Docker SDK): the Space's README needs `sdk: docker` and
# `app_port: 8501` (see docs/DEPLOY.md).  Runs as an unprivileged user with uid 1000, as Spaces do.
FROM python:3.11-slim

# MALLOC_ARENA_MAX=2: glibc gives every thread (Streamlit runs each session's script in one) its own
# malloc arena, and the fragments add up: in the classroom load test the server's peak memory was
# clearly lower with it (`python -m benchmarks.run --only soak --soak-env MALLOC_ARENA_MAX=...`).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MALLOC_ARENA_MAX=2 \
    PORT=8501

# HAProxy and supervisor for deploy/class-server.sh (Debian's packages).
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends haproxy supervisor \
    && rm -rf /var/lib/apt/lists/*

RUN useradd --create-home --uid 1000 user
WORKDIR /app

# Dependencies first, so that a code change does not reinstall them.  requirements.txt takes torch
# from PyTorch's CPU-only index (no CUDA packages), as the README's install command does.
COPY requirements.txt ./
RUN pip install -r requirements.txt

COPY --chown=user:user . .
# The production profile becomes the config Streamlit reads (it also overrides the local one).
RUN cp .streamlit/production.toml .streamlit/config.toml

USER user
EXPOSE 8501

# HAProxy passes /_stcore/health to a worker, which answers "ok" once it serves (class-server.sh
# opens the port only when every worker does); the first page load imports torch and takes a few
# seconds more, hence the start period.
HEALTHCHECK --interval=30s --timeout=5s --start-period=40s --retries=3 \
    CMD python -c "import os, sys, urllib.request; r = urllib.request.urlopen('http://127.0.0.1:%s/_stcore/health' % os.environ.get('PORT', '8501'), timeout=4); sys.exit(0 if r.read().strip() == b'ok' else 1)"

# The class server: one Streamlit worker per core under supervisord, behind HAProxy on $PORT, which
# keeps each browser on one worker (a single Streamlit process computes on one core; see
# docs/DEPLOY.md), with production.toml's settings and a watchdog that restarts a hung worker.  EXPLORER_WORKERS sets the number of workers (default: the cores the container
# may use).  The script reads $PORT (docker run -e PORT=7860 ...) and stops every process on the
# container's stop signal; the workers' and HAProxy's logs are the container's output.
CMD ["bash", "deploy/class-server.sh"]
