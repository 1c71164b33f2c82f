"""netghost.shell.confine: a sealed lab, where only what the lab simulates runs without a person's approval.

:class:`LabConfinement` judges one classified argv (``LabConfinement.judge(argv, search_path=..., cwd=...)``) and answers with a
:class:`~netghost.contracts.Confinement` the shell records in the audit and enforces: an unsimulated
command runs only on a person's approval. ``programs.toml`` is the table it reads (readers, the remover,
the file options of the simulated programs); :func:`resolve_program` finds the file a name runs.
"""

from netghost.shell.confine._confine import LabConfinement, resolve_program

__all__ = ["LabConfinement", "resolve_program"]
