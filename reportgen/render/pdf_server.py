"""Imported once by the fork server of the PDF workers (reportgen.render.pdf_workers), before it forks any of them:
WeasyPrint is loaded, its fonts are set up and a first small PDF is rendered here, so that every worker forked
from the server starts warm. Importing this module is its whole job.
"""

from __future__ import annotations

import gc

from reportgen.interrupts import as_worker
from reportgen.render.pdf import preload

# The server ends with the build that started it (killed with it, even by SIGKILL), and so do the workers it forks.
as_worker()
# The report's layout waits for this server, its painting does not: it is warmed by the painter's own first
# document, painted while the rest of the figures are drawn (0.01 s sooner to the layout)
preload(painting=False)
# What is loaded now lives as long as the server and its workers: the collector need not walk it again.
gc.freeze()
