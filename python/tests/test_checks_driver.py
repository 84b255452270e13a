"""forgectl_checks.run as forgectl runs it: a process per trial, a result file whatever the checks do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
from pathlib import Path

from tests.helpers import FIXTURES, child_env

SHOP = FIXTURES / "shop"
HEADER = "from tolokaforge.core.grading.checks_interface import CheckFailed, CheckPassed, CheckSkipped, check, init\n"


def run_driver(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "forgectl_checks.run", *args], env=child_env(), capture_output=True, text=True, timeout=timeout)


class ShopChecks(unittest.TestCase):
    def run_trial(self, trial: str, *extra: str) -> dict:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "result.json")
            p = run_driver(
                "--checks", str(SHOP / "checks.py"),
                "--transcript", str(SHOP / "trials" / f"{trial}.json"),
                "--initial-state", str(SHOP / "initial_state.json"),
                "--final-state", str(SHOP / "trials" / f"{trial}_final.json"),
                "--relative-import", "../shop_helpers",
                "--out", out, *extra,
            )  # fmt: skip
            self.assertEqual(p.returncode, 0, p.stderr)
            return json.loads(Path(out).read_text())

    def test_a_passing_trial(self) -> None:
        r = self.run_trial("pass")
        self.assertEqual(r["status"], "completed")
        self.assertEqual([c["name"] for c in r["checks"]], ["order_was_paid", "kettles_left_the_stock", "paid_after_placing", "customer_heard_the_total"])
        self.assertTrue(all(c["passed"] for c in r["checks"]))
        self.assertEqual(r["totals"], {"total": 4, "passed": 4, "failed": 0, "errors": 0, "skipped": 0})
        self.assertEqual(r["score"], 1.0)
        self.assertEqual(r["reason"], "Custom checks: score=1.00, all 4 checks passed")

    def test_a_failing_trial_with_partial_credit(self) -> None:
        r = self.run_trial("fail")
        by_name = {c["name"]: c for c in r["checks"]}
        self.assertFalse(any(c["passed"] for c in r["checks"]))
        self.assertEqual(by_name["order_was_paid"]["message"], "expected 1 paid order, found 0")
        self.assertEqual(by_name["kettles_left_the_stock"]["score"], 0.5)
        self.assertEqual(by_name["paid_after_placing"]["message"], "calls were ['place_order']")
        self.assertEqual(r["score"], 0.125)
        self.assertTrue(r["reason"].startswith("Custom checks: score=0.12, 4 of 4 checks failed — order_was_paid: "))


class Suites(unittest.TestCase):
    """Each test writes its own checks.py into a task directory."""

    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self._tmp.name)
        (self.dir / "transcript.json").write_text(json.dumps([{"role": "user", "content": "hi"}]))
        (self.dir / "initial.json").write_text("{}")
        (self.dir / "final.json").write_text("{}")
        self.out = self.dir / "result.json"

    def tearDown(self) -> None:
        self._tmp.cleanup()

    def run_checks(self, source: str | None, *extra: str, transcript: str = "transcript.json", final: str = "final.json") -> dict:
        if source is not None:
            (self.dir / "checks.py").write_text(source)
        p = run_driver(
            "--checks", str(self.dir / "checks.py"), "--transcript", str(self.dir / transcript),
            "--initial-state", str(self.dir / "initial.json"), "--final-state", str(self.dir / final),
            "--out", str(self.out), *extra,
        )  # fmt: skip
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(self.out.read_text())

    def test_errors_skips_and_bad_returns_per_check(self) -> None:
        r = self.run_checks(
            HEADER
            + textwrap.dedent("""
            @check
            def ok():
                return CheckPassed("fine", details={"n": 1})

            @check
            def raises():
                return {}["missing"]

            @check
            def returns_a_dict():
                return {"passed": True}

            @check
            def skipped():
                return CheckSkipped("not applicable")
            """)
        )
        statuses = {c["name"]: (c["status"], c["score"], c["message"]) for c in r["checks"]}
        self.assertEqual(statuses["ok"], ("passed", 1.0, "fine"))
        self.assertEqual(statuses["raises"][:2], ("error", 0.0))
        self.assertEqual(statuses["raises"][2], "Check raised exception: KeyError: 'missing'")
        self.assertIn("KeyError", r["checks"][1]["details"]["traceback"])
        self.assertEqual(statuses["returns_a_dict"][2], "Invalid return type: dict. Expected CheckPassed, CheckFailed, or CheckSkipped.")
        self.assertEqual(statuses["skipped"], ("skipped", 0.0, "not applicable"))
        self.assertEqual(r["totals"], {"total": 4, "passed": 1, "failed": 0, "errors": 2, "skipped": 1})
        self.assertAlmostEqual(r["score"], 1 / 3)  # skipped checks are not averaged
        self.assertEqual(r["checks"][0]["details"], {"n": 1})

    def test_only_skips_is_no_verdict(self) -> None:
        r = self.run_checks(HEADER + "@check\ndef a():\n    return CheckSkipped('n/a')\n")
        self.assertEqual((r["status"], r["score"]), ("completed", None))
        self.assertEqual(r["reason"], "Custom checks: no check reached a verdict — all 1 skipped")

    def test_suites_that_cannot_run(self) -> None:
        cases = [
            ("def broken(:\n", "Failed to load checks: SyntaxError"),
            ("import no_such_module_anywhere\n", "Failed to load checks: ModuleNotFoundError: No module named 'no_such_module_anywhere'"),
            (HEADER + "@init(interface_version='2.0')\ndef s(ctx): pass\n@check\ndef a():\n    return CheckPassed()\n",
             "Unsupported interface version: 2.0. Supported: ['1.0']"),
            (HEADER + "x = 1\n", "No @check decorated functions found in checks.py"),
            (HEADER + "@init()\ndef s(ctx):\n    raise RuntimeError('no data')\n@check\ndef a():\n    return CheckPassed()\n",
             "Init failed: RuntimeError: no data"),
            (HEADER + "def __executor__():\n    return CheckPassed()\n__executor__ = check(__executor__)\n", "collide with reserved name(s): ['__executor__']"),
        ]
        for source, says in cases:
            with self.subTest(says=says):
                r = self.run_checks(source)
                self.assertEqual(r["status"], "error")
                self.assertIn(says, r["error"])
                self.assertEqual(r["score"], 0.0)
                self.assertTrue(r["reason"].startswith("Custom checks: the suite could not run — "))
        r = self.run_checks(None, "--no-fail-on-error")
        self.assertEqual((r["status"], r["score"]), ("error", None))
        (self.dir / "checks.py").unlink()
        self.assertIn("Checks file not found", self.run_checks(None)["error"])

    def test_a_check_that_never_returns_is_killed_at_the_timeout(self) -> None:
        pid_file = self.dir / "pid"
        start = time.monotonic()
        r = self.run_checks(
            HEADER + f"import os\n@check\ndef spin():\n    open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n    while True:\n        pass\n",
            "--timeout", "1.5",
        )
        self.assertLess(time.monotonic() - start, 15)
        self.assertEqual((r["status"], r["error"], r["score"]), ("timeout", "Checks timed out after 1.5s", 0.0))
        with self.assertRaises(ProcessLookupError):
            os.kill(int(pid_file.read_text()), 0)

    def test_what_checks_print_stays_out_of_the_result(self) -> None:
        r = self.run_checks(HEADER + "print('noise')\n@check\ndef a():\n    print('{\"status\": \"x\"}')\n    return CheckPassed('ok')\n")
        self.assertEqual((r["status"], r["checks"][0]["message"]), ("completed", "ok"))

    def test_relative_imports_and_siblings(self) -> None:
        (self.dir / "project").mkdir()
        (self.dir / "project" / "rules.py").write_text("LIMIT = 3\n")
        task = self.dir / "project" / "tasks" / "t1"
        task.mkdir(parents=True)
        (task / "local_rules.py").write_text("NAME = 'local'\n")
        (task / "checks.py").write_text(HEADER + "from rules import LIMIT\nfrom local_rules import NAME\n@check\ndef a():\n    return CheckPassed(f'{NAME} {LIMIT}')\n")
        p = run_driver(
            "--checks", str(task / "checks.py"), "--relative-import", "../..", "--transcript", str(self.dir / "transcript.json"),
            "--initial-state", str(self.dir / "initial.json"), "--final-state", str(self.dir / "final.json"), "--out", str(self.out),
        )  # fmt: skip
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(self.out.read_text())["checks"][0]["message"], "local 3")

    def test_what_the_context_holds(self) -> None:
        (self.dir / "initial.json").write_text(json.dumps({"orders": []}))
        (self.dir / "final.json").write_text(json.dumps({"db": {"orders": [{"id": "O-1"}]}, "filesystem": {"/env/fs/agent-visible/a.txt": "hi"}}))
        (self.dir / "wire.json").write_text(json.dumps({"messages": [
            {"role": "user", "content": [{"type": "text", "text": "pay"}]},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {"name": "pay", "arguments": "{\"order_id\": \"O-1\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "paid"},
            {"role": "assistant", "content": "done"},
        ]}))  # fmt: skip
        (self.dir / "task.json").write_text(json.dumps({"task_id": "t-9", "name": "Pay", "category": "shop"}))
        r = self.run_checks(
            HEADER
            + textwrap.dedent("""
            @init()
            def setup(ctx):
                global C
                C = ctx

            @check
            def context():
                call = C.tool_calls[0]
                return CheckPassed(repr((C.initial_state.data, sorted(C.final_state.keys()), C.final_state.get("orders")[0]["id"],
                                         call.name, call.arguments, call.result, call.status, C.response,
                                         C.transcript.messages[0].content, C.task.task_id, C.task.domain)))
            """),
            "--task", str(self.dir / "task.json"),
            transcript="wire.json",
        )
        self.assertEqual(
            r["checks"][0]["message"],
            repr(({"orders": []}, ["filesystem", "orders"], "O-1", "pay", {"order_id": "O-1"}, "paid", "success", "done", "pay", "t-9", "shop")),
        )

    def test_a_refused_call_is_an_error_not_a_success(self) -> None:
        """A check of "a successful write_file of the refund": the refused write fails it, the honest one passes."""
        source = HEADER + textwrap.dedent("""
            @init()
            def setup(ctx):
                global C
                C = ctx

            @check
            def refund_written():
                ok = [c for c in C.tool_calls if c.name == "write_file" and c.status == "success"]
                return CheckPassed("written") if ok else CheckFailed(repr([(c.status, c.result) for c in C.tool_calls]))
            """)

        def transcript(name: str, status: str, result: str, on_call: bool) -> str:
            call = {"id": "c1", "type": "function", "function": {"name": "write_file", "arguments": "{\"path\": \"/etc/refund.txt\"}"}}
            if on_call:
                call.update(status=status, result=result)
            (self.dir / name).write_text(json.dumps({"messages": [
                {"role": "assistant", "content": "", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "name": "write_file", "content": result, "status": status},
            ]}))  # fmt: skip
            return name

        refused = "Error: path '/etc/refund.txt' is outside the workspace"
        for on_call in (True, False):  # forgectl's form (on the call and the tool message), and the tool message alone
            with self.subTest(on_call=on_call):
                r = self.run_checks(source, transcript=transcript("refused.json", "error", refused, on_call))
                self.assertEqual(r["checks"][0]["status"], "failed")
                self.assertEqual(r["checks"][0]["message"], repr([("error", refused)]))
                r = self.run_checks(source, transcript=transcript("honest.json", "success", "wrote 7 bytes", on_call))
                self.assertEqual((r["checks"][0]["status"], r["checks"][0]["message"]), ("passed", "written"))

    def test_bad_evidence_is_an_error_naming_the_file(self) -> None:
        (self.dir / "bad.json").write_text("{not json")
        (self.dir / "list.json").write_text("[1]")
        (self.dir / "checks.py").write_text(HEADER + "@check\ndef a():\n    return CheckPassed()\n")
        r = self.run_checks(None, transcript="bad.json")
        self.assertEqual(r["status"], "error")
        self.assertIn(f"transcript {self.dir / 'bad.json'}: not JSON", r["error"])
        self.assertIn("message 0 is not an object", self.run_checks(None, transcript="list.json")["error"])
        self.assertIn("expected a JSON object", self.run_checks(None, final="list.json")["error"])
        self.assertIn("No such file or directory", self.run_checks(None, final="missing.json")["error"])

    def test_an_unwritable_result_is_exit_code_1_and_bad_flags_exit_code_2(self) -> None:
        (self.dir / "checks.py").write_text(HEADER + "@check\ndef a():\n    return CheckPassed()\n")
        common = ["--checks", str(self.dir / "checks.py"), "--transcript", str(self.dir / "transcript.json"),
                  "--initial-state", str(self.dir / "initial.json"), "--final-state", str(self.dir / "final.json")]  # fmt: skip
        p = run_driver(*common, "--out", str(self.dir / "no" / "such" / "dir.json"))
        self.assertEqual(p.returncode, 1)
        self.assertIn("cannot write", p.stderr)
        self.assertEqual(run_driver(*common, "--out", str(self.out), "--timeout", "0").returncode, 2)
        self.assertEqual(run_driver(*common).returncode, 2)


if __name__ == "__main__":
    unittest.main()
