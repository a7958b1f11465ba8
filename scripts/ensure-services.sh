#!/usr/bin/env bash
# Start the local services the integration tests need (PostgreSQL, RabbitMQ) when they are not already running.
# This machine kind starts both before each session and CI run; this is the fallback for when one has stopped.
set -u
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

if ! port_open 5432; then
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
    echo "starting PostgreSQL"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start || true
  fi
fi
if ! port_open 5672; then
  if command -v rabbitmq-server >/dev/null 2>&1; then
    echo "starting RabbitMQ"
    rabbitmq-server -detached || true
  fi
fi
for _ in $(seq 1 60); do
  port_open 5432 && port_open 5672 && exit 0
  sleep 1
done
port_open 5432 || echo "warning: PostgreSQL is not answering on 127.0.0.1:5432" >&2
port_open 5672 || echo "warning: RabbitMQ is not answering on 127.0.0.1:5672" >&2
exit 0
