"""JSON with a key given twice is refused wherever it crosses into forgectl's Python: the server's
requests, its state tools, a JSON string decoded as an argument, the checks driver's evidence."""

from __future__ import annotations

import json
import os
import tempfile
import unittest

from forgectl_checks.evidence import InputError, read_json
from forgectl_mcp import strict_json
from tests.helpers import FIXTURES, StdioServer

SHOP = str(FIXTURES / "shop" / "mcp_server.py")


class StrictJson(unittest.TestCase):
    def test_a_key_twice_is_an_error_naming_it_anywhere_in_the_document(self) -> None:
        with self.assertRaisesRegex(strict_json.DuplicateKeyError, "'book_id' twice"):
            strict_json.loads('{"member_id": "M-7", "book_id": "B-2", "book_id": "B-3"}')
        with self.assertRaisesRegex(ValueError, "'x' twice"):
            strict_json.loads('[{"a": {"x": 1, "x": 2}}]')
        # The control: the same key in different objects is fine, and values are as json's.
        self.assertEqual(strict_json.loads('{"a": {"k": 1}, "b": {"k": 2}}'), {"a": {"k": 1}, "b": {"k": 2}})

    def test_the_server_refuses_a_request_with_a_key_twice_and_goes_on(self) -> None:
        with StdioServer(SHOP) as s:
            s.initialize()
            s.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}\n')
            answer = s.read()
            self.assertEqual(answer["error"]["code"], -32700)
            self.assertIn("'method' twice", answer["error"]["message"])
            self.assertEqual(s.request("ping")["result"], {})
            set_state = s.call("_tolokaforge_set_state_", {"state_json": '{"orders": [], "orders": [1]}'})
            self.assertIn("'orders' twice", json.dumps(set_state))
            self.assertNotIn("result", set_state)
            s.close()

    def test_the_checks_driver_refuses_evidence_with_a_key_twice(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "final.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write('{"orders": [], "orders": [{"id": 1}]}')
            with self.assertRaisesRegex(InputError, "'orders' twice"):
                read_json(path, "--final-state")
            with open(path, "w", encoding="utf-8") as f:
                json.dump({"orders": [{"id": 1}]}, f)
            self.assertEqual(read_json(path, "--final-state"), {"orders": [{"id": 1}]})


if __name__ == "__main__":
    unittest.main()
