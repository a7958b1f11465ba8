"""Run in a fresh process by `kvgraft bench context`: a serving process that answers the needle questions from
the store named by the environment, then reports its peak resident memory. Prints one JSON object."""

from __future__ import annotations

import json
import sys

from bench.memory import peak_rss_bytes
from workers.flywheel.answer import AnswerParams
from workers.flywheel.answering import answer_question
from workers.logs import configure_logging
from workers.runtime import open_runtime
from workers.settings import load_settings


def main(argv: list[str]) -> None:
    configure_logging()
    questions = json.loads(argv[0])
    routes = []
    with open_runtime(load_settings()) as rt:
        for q in questions:
            routes.append(answer_question(rt, q, params=AnswerParams(use_direct=False, use_transfer=False)).route)
    print(json.dumps({"peak_rss_bytes": peak_rss_bytes(), "answered_on_context": routes.count("context")}))


if __name__ == "__main__":
    main(sys.argv[1:])
