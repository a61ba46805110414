"""Package data: the meta-scoring and ingestion programs (links to the repository's
``scoring_program/`` and ``ingestion_program/``), copied into a bundle's program folders by
:mod:`metascore.bundle.meta.program_folder`. Nothing here is imported."""
