"""What the meta-scoring program and ``metascore analyze`` write: the leaderboard files and
score files (:mod:`~metascore.render.writers`, staged and published whole), the
``detailed_results.html`` report (:mod:`~metascore.render.report` and its cells, labels and
style; its record, :mod:`~metascore.render.ranking_record`, and its re-weighting panel,
:mod:`~metascore.render.reweight` with the static scripts of ``assets/``), ``per_judge.csv.gz``, and the analysis report with its comparison fragment and inline
SVG charts. Only :mod:`~metascore.render.writers` touches files; the others return text."""
