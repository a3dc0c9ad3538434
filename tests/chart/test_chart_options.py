#!/usr/bin/env python3
"""Chart options a platform team needs on its first day (issue 42), rendered
by the real helm (tests/lib/chart.py). Proven:

- without image.repository (the placeholder default REGISTRY/wasd, or the
  ghcr.io/wasd-io/wasd of earlier releases) `helm template` and `helm
  install --dry-run` fail at once with one message naming the value and how
  to set it; an empty name is refused by the schema; a real name renders.
"""
import unittest

from lib import chart

MESSAGE = "image.repository is not set"
HOW = "--set image.repository=REGISTRY/wasd"


class ImageMustBeNamed(unittest.TestCase):
    def test_placeholder_fails_template_and_install(self):
        for repo in ("REGISTRY/wasd", "ghcr.io/wasd-io/wasd", "ghcr.io/wasd-io/wasd/"):
            for notes in (False, True):  # helm template; helm install --dry-run
                with self.subTest(repo=repo, install=notes):
                    with self.assertRaises(chart.RenderError) as cm:
                        chart.render_text(sets=["image.repository=" + repo], notes=notes)
                    err = str(cm.exception)
                    self.assertIn(MESSAGE, err)
                    self.assertIn(HOW, err)
                    # One message: helm stops at the first failing template.
                    self.assertEqual(err.count(MESSAGE), 1, err)

    def test_chart_default_is_the_placeholder(self):
        # The control for the test above: what a user who sets nothing gets.
        self.assertEqual(chart.load_values()["image"]["repository"], "REGISTRY/wasd")

    def test_empty_name_is_refused_by_the_schema(self):
        with self.assertRaises(chart.RenderError) as cm:
            chart.render_text(sets=["image.repository="])
        self.assertIn("/image/repository", str(cm.exception))

    def test_a_named_image_renders_everywhere(self):
        objs = chart.render(sets=["image.repository=registry.example.com/team/wasd"])
        images = set()
        for o in objs:
            spec = o.get("spec", {})
            pod = spec.get("template", {}).get("spec") if o["kind"] in ("Deployment", "Job") else \
                spec if o["kind"] == "Pod" else None
            if pod:
                images |= {c["image"] for c in pod["containers"]}
        self.assertEqual(images, {"registry.example.com/team/wasd:0.1.0"})


if __name__ == "__main__":
    unittest.main()
