"""torch-export-matrix: run torch.export cases across torch releases and report what works."""

from __future__ import annotations

__version__ = "0.1.0"
