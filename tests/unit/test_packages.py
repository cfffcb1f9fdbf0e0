"""The packages a cell's dependency set names, and the versions its environment resolved."""

from __future__ import annotations

from matrix.records import packages


def test_the_case_declares_its_set_less_what_with_added():
    assert packages.declared("timm + transformers==4.57.1", "transformers==4.57.1") == ("timm",)
    assert packages.declared("timm", "") == ("timm",)
    assert packages.declared(None, None) == () and packages.declared(float("nan"), "") == ()


def test_named_packages_get_their_resolved_version_whatever_the_spelling():
    added = {"Huggingface_Hub": "2.4.0", "timm": "1.0.31", "torchvision": "0.20.1"}
    assert packages.names("huggingface-hub>=1 + timm") == ["huggingface-hub", "timm"]
    assert packages.named_versions("huggingface-hub>=1 + timm + einops", added) == [
        ("huggingface-hub", "2.4.0"),
        ("timm", "1.0.31"),
        ("einops", None),
    ]
    assert packages.describe("timm + einops", added) == "timm 1.0.31, einops –"
    assert packages.describe("", added) == "" and packages.resolved(None) == {}
