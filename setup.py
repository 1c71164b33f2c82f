"""Build the PCAP engine's compiled kernels (Cython) at install time; everything else is in pyproject.toml.

Every ``src/netghost/**/*.pyx`` becomes an extension module of the same dotted name. The extensions
are ``optional``: on a machine without a C compiler the install still succeeds and the engine runs its
pure-numpy path (slower, same output; ``netghost.forensics.accel`` says which path is active).
"""

from __future__ import annotations

import os
from pathlib import Path

from setuptools import Extension, setup

SRC = Path(__file__).parent / "src"


def _extensions() -> list[Extension]:
    pyx = sorted(SRC.rglob("*.pyx"))
    if not pyx:
        return []
    try:
        from Cython.Build import cythonize  # noqa: PLC0415  a build requirement, absent at lint time is fine
    except ImportError:  # build requirements not honoured (e.g. --no-build-isolation without Cython)
        return []
    mods = [
        Extension(
            ".".join(p.relative_to(SRC).with_suffix("").parts),
            [str(p.relative_to(Path(__file__).parent))],
            extra_compile_args=["-O3"],
            optional=True,
        )
        for p in pyx
    ]
    exts = cythonize(mods, language_level=3, nthreads=os.cpu_count() or 1, compiler_directives={
        "boundscheck": False, "wraparound": False, "cdivision": True, "initializedcheck": False,
    })
    for ext in exts:  # cythonize() returns new Extension objects without the ``optional`` flag
        ext.optional = True
    return exts


if __name__ == "__main__":  # setuptools runs this file as __main__; tests import _extensions()
    setup(ext_modules=_extensions(), options={"build_ext": {"parallel": os.cpu_count() or 1}})
