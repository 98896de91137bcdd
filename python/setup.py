"""Installs hetsim's Python package offline: `pip install ./python` (setuptools from Debian's
python3-setuptools; no pyproject.toml, so pip builds it with the installed setuptools rather
than fetching one)."""
from setuptools import setup

setup(
    name="hetsim",
    version="0.1.0",
    description="hetsim's model server (PyTorch models) and results API (pandas)",
    packages=["hetsim"],
    python_requires=">=3.9",
)
