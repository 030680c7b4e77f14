"""One local Spark session for every Spark test: local[2], two shuffle partitions, no UI, a
JVM tuned to start fast. Created on first use and kept for the rest of the run."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

SPARK_ENV = {
    "QADMIN_SPARK_PARTITIONS": "2",
    "QADMIN_SPARK_DRIVER_MEMORY": "1g",
    "QADMIN_SPARK_JAVA_OPTIONS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
}


@pytest.fixture(scope="session")
def spark_session() -> Iterator[Any]:
    pytest.importorskip("pyspark", reason="pip install -e '.[test]' installs pyspark")
    from qadmin.pipeline import spark

    saved = {k: os.environ.get(k) for k in SPARK_ENV}
    os.environ.update(SPARK_ENV)
    try:
        session = spark.session(
            spark.Where("local[2]"), ["postgresql.jar", "mariadb-java-client.jar"]
        )
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    yield session
    session.stop()
