"""Imported once by the fork server of the PDF workers (reportgen.render.pdf_workers), before it forks any of them:
WeasyPrint is loaded, its fonts are set up and a first small PDF is rendered here, so that every worker forked
from the server starts warm. Importing this module is its whole job.
"""

from __future__ import annotations

from reportgen import collector
from reportgen.interrupts import as_worker
from reportgen.render.pdf import preload

# What is loaded here lives as long as the server and its workers: no collector pass over it, then or later
# (reportgen.collector). The server ends with the build that started it (killed with it, even by SIGKILL), and so
# do the workers it forks. The report's layout waits for this server, its painting does not: it is warmed by the
# painter's own first document, painted while the rest of the figures are drawn (0.01 s sooner to the layout).
with collector.loading():
    as_worker()
    preload(painting=False)
