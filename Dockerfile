# The cardarena image: the API (cardarena serve), the workers (cardarena worker) and rq-dashboard.
# docker-compose.yml runs each as its own service; see it for the commands.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
# bubblewrap: the sandbox hosted bots run in (docs/architecture.md "Hosted bots")
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends bubblewrap \
    && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml README.md ./
# the exact versions CI tests (pip-compile's lock, requirements/README.md), then the project itself
COPY requirements/production.txt ./requirements/
COPY games ./games
COPY core ./core
COPY server ./server
COPY worker ./worker
COPY sdk ./sdk
COPY example_bots ./example_bots
COPY cardarena ./cardarena
# the rules pages: the wheel installs them (pyproject's data-files) for /games/<game>/rules
COPY docs/rules ./docs/rules
# then the standard library's bytecode, which the base image deletes: a hosted bot's sandbox reads
# the runtime read-only, so each start would compile json, typing, logging... again (pip compiles
# what it installs)
RUN pip install --no-cache-dir -r requirements/production.txt \
    && pip install --no-cache-dir --no-deps . \
    && python -m compileall -q -x '/(site-packages|tests?|idle_test)/' "$(python -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')" \
    && useradd --create-home --uid 10001 cardarena \
    && mkdir -p /var/lib/cardarena/archive /var/lib/cardarena/code \
    && chown cardarena /var/lib/cardarena/archive /var/lib/cardarena/code
USER cardarena
# the API and web pages (cardarena serve); rq-dashboard, when run from this image, on 9181
EXPOSE 8000
CMD ["cardarena", "serve", "--host", "0.0.0.0", "--port", "8000"]
