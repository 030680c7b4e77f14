"""Moving and analysing queue data in bulk: export, archive, load and the telemetry report.

Each operation has a plain Python path (one connection, streaming, the default) and, where
data outgrows one machine, a Spark path (``spark.py``); pyspark is imported only there.
"""
