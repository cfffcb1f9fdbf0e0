"""Torch environments: the release matrix, installers, pip configuration, virtual environments."""
