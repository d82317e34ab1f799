"""The long-running ingest daemon (``newsdedup serve``): HTTP API, durable queue, one writer.

Modules: ``queue`` (durable SQLite queue), ``worker`` (batching, prefetching features, one
writer), ``lease`` (writer lease: file lock or Elasticsearch document), ``api`` (HTTP),
``http_limits`` (connection cap, read deadlines, body byte budget), ``metrics``, ``service``
(wiring, scheduled crawls, shutdown), ``cli`` (``serve``, ``dead-letters``). The ``[daemon]``
settings section is ``indexer.settings.DaemonSettings``, like every other section.
"""
