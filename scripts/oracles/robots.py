"""Protego's answers for robots.txt cases, the oracle of RobotsRulesTests.

Reads JSON on stdin: [{"robots": TEXT, "agent": USER-AGENT, "urls": [URL, ...]}, ...]; prints
[{"allowed": [BOOL, ...], "crawlDelay": SECONDS or null}, ...].
"""
import json
import sys

from protego import Protego

answers = []
for case in json.load(sys.stdin):
    parser = Protego.parse(case["robots"])
    answers.append({
        "allowed": [parser.can_fetch(url, case["agent"]) for url in case["urls"]],
        "crawlDelay": parser.crawl_delay(case["agent"]),
    })
json.dump(answers, sys.stdout)
