"""Trace analysis from Python: the `taskring trace` analyser as Python objects.

    import taskring.trace as tt
    a = tt.analyse(["rank0.log", "rank1.log"], expect_ranks=2, expect_rounds=10, warmup=2)
    a.ok                    # every expected (rank, round) cell valid, nothing torn
    a.matrix.cell(1, 3)     # Cell(rank=1, round=3, valid=True, effective_us=..., ...)
    a.matrix.cell_stats     # Summary over valid cells (n, min, median, mean, max, stdev, ...)
    a.to_rows()             # one dict per cell, pandas-free (pandas.DataFrame(a.to_rows()) if you have it)

``python3 -m taskring.trace LOG...`` prints the same views as ``taskring
trace`` and exits the same way: 0 all expected cells valid and nothing torn,
3 missing or torn data, 2 usage errors (bad flags, unreadable file).
"""

from ._analysis import Analysis, Cell, Diagnostic, Matrix, RankInfo, Summary, analyse

__all__ = ["analyse", "Analysis", "Matrix", "Cell", "RankInfo", "Summary", "Diagnostic"]
