"""The chart's matchConditions as rendered by the real helm: each Deployment
webhook carries wasd's own condition first and a user's
admission.matchConditions after it, and the chart's name cannot be taken.
Whether the expressions send the right requests to the webhook is judged by
kube-apiserver itself, in tests/cluster/test_match_conditions_real.py (the
objects are tests/lib/match_cases.py); no CEL model of ours evaluates them.
"""

import unittest


from lib import chart
from lib.match_cases import MUTATE, VALIDATE


def expressions():
    objs = chart.render()
    out = {}
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        for wh in chart.one(objs, kind)["webhooks"]:
            for mc in wh.get("matchConditions", []):
                out[(kind, wh["name"], mc["name"])] = mc["expression"]
    return out


class MatchConditions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.exprs = expressions()

    def test_the_deployment_webhooks_have_their_own_conditions(self):
        self.assertEqual(sorted(k[1] for k in self.exprs), [MUTATE, VALIDATE])
        # The mutating one sees everything the validating one does, plus the
        # stray template marker (tests/cluster/test_match_conditions_real.py).
        self.assertNotEqual(self.exprs[("MutatingWebhookConfiguration", MUTATE, "wasd-opted-in")],
                            self.exprs[("ValidatingWebhookConfiguration", VALIDATE, "wasd-opted-in")])

    def test_extra_conditions_are_added_not_substituted(self):
        extra = {"name": "skip-ci", "expression": "!has(object.metadata.labels)"}
        path = chart.write_values({"admission": {"matchConditions": [extra]}})
        objs = chart.render(values_files=[path])
        for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            for wh in chart.one(objs, kind)["webhooks"]:
                if "matchConditions" in wh:
                    self.assertEqual(wh["matchConditions"][0]["name"], "wasd-opted-in")
                    self.assertEqual(wh["matchConditions"][1:], [extra])
        path = chart.write_values({"admission": {"matchConditions": [
            {"name": "wasd-opted-in", "expression": "true"}]}})
        with self.assertRaises(chart.RenderError) as cm:
            chart.render(values_files=[path])
        self.assertIn("the name wasd-opted-in is the chart's own", str(cm.exception))


if __name__ == "__main__":
    unittest.main(verbosity=2)
