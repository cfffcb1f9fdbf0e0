"""A ``load`` whose every result stands, answered from the result cache without importing torch.

As a run does (:mod:`.cell_cache`), a load that imports torch keeps what it learnt of its environment
(the build's fields of each load's key, the serializer's version, whether this release has
``torch.export.load``) under the key of what the environment holds on disk
(:func:`.known.environment_key`). A later load computes that key first; where the cache holds it
and every selected program's load has a result that stands (the same test as always: its files are
what its ``meta.json`` lists, its signature is checked before), it writes its records from the cache.
Anything else (one load not known, a GPU device, a package's load or an AOTInductor compile, whose
keys name the C++ compiler) means the ordinary load, which imports torch.

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from ..contract.layout import Artifact
from ..contract.products import Product
from . import batch, reuse, uses
from .known import ENVIRONMENT_KIND, environment_key


class KnownLoads:
    """The result cache's side of ``loader.LoadBatch`` for a load answered without torch."""

    device: str
    env: Dict[str, Any]
    can_load: bool
    uses: Dict[Any, Tuple[Product, Artifact]]
    _build: Optional[Dict[str, Any]] = None  # the torch build's fields of each key: from torch, or the cache

    def build_fields(self) -> Dict[str, Any]:
        if self._build is None:
            self._build = reuse.build_fields()  # imports torch: only where set_up did already
        return self._build

    def _known_run(self) -> Optional[Dict[str, Any]]:
        """The options the kept facts depend on; None where this load may not be answered without torch."""
        # A package's load and a compile run the C++ compiler, a fact of this machine only torch's set-up finds.
        if self.device != "cpu" or any(uses.of(product).compiles for product, _ in self.uses.values()):
            return None
        return {"command": "load", "device": self.device, "variant": self.env["variant"]}

    def keep_environment(self, settings: batch.Settings) -> None:
        """Keep what this load (torch imported) learnt of its environment, for a later load without torch."""
        run = self._known_run()
        key = environment_key(run) if settings.cache and run is not None else None
        if settings.cache and key is not None:
            facts = {"build": self.build_fields(), "serializer_version": self.env.get("serializer_version"),
                     "can_load": self.can_load}  # fmt: skip
            reuse.ResultCache(settings.cache, ENVIRONMENT_KIND).put(key, {"kind": ENVIRONMENT_KIND}, facts)

    def known_set_up(self, settings: batch.Settings, run_id: str) -> Optional[Dict[str, Any]]:
        """``set_up`` from what an earlier load kept: ``{}`` (a load writes no record first), or None."""
        run = self._known_run()
        key = environment_key(run) if settings.cache and run is not None else None
        entry = reuse.ResultCache(settings.cache, ENVIRONMENT_KIND).get(key) if settings.cache and key else None
        facts = entry["extra"] if entry is not None else {}
        if not isinstance(facts.get("build"), dict) or not isinstance(facts.get("can_load"), bool):
            return None
        self._build, self.can_load = dict(facts["build"]), facts["can_load"]
        self.env.update(run_id=run_id, serializer_version=facts.get("serializer_version"))
        return {}
