"""What qadmin hands to Spark: the password only as a connection property, never in the URL;
the MariaDB/MySQL URL scheme Spark quotes correctly; the JDBC drivers found or named."""

from __future__ import annotations

import pytest

from qadmin.engines import open_engine
from qadmin.errors import QadminError, UnsupportedError
from qadmin.pipeline import spark


@pytest.mark.parametrize(
    ("dsn", "url"),
    [
        ("postgresql://app:pw-Secret9@db1:6543/sales", "jdbc:postgresql://db1:6543/sales"),
        ("postgresql://app:pw-Secret9@db1/sales", "jdbc:postgresql://db1:5432/sales"),
        ("mysql://app:pw-Secret9@db2/shop", "jdbc:mysql://db2:3306/shop"),
        ("mariadb://app:pw-Secret9@db2:3307/shop", "jdbc:mysql://db2:3307/shop"),
    ],
)
def test_the_password_is_a_property_never_part_of_the_url(dsn, url):
    options = spark.jdbc_options(open_engine(dsn))
    assert options["url"] == url
    assert options["user"] == "app"
    assert options["password"] == "pw-Secret9"
    assert all("pw-Secret9" not in v for k, v in options.items() if k != "password")


def test_mariadb_loads_are_batched_and_the_driver_is_named():
    options = spark.jdbc_options(open_engine("mysql://root@127.0.0.1/test"))
    assert options["rewriteBatchedStatements"] == "true"
    assert options["driver"] == "org.mariadb.jdbc.Driver"
    assert options["user"] == "root"  # the engine's own default, as pymysql logs in


def test_sqlite_has_no_spark_path(tmp_path):
    with pytest.raises(UnsupportedError, match="no JDBC path to sqlite"):
        spark.jdbc_options(open_engine(f"sqlite:///{tmp_path / 'q.db'}"))


def test_jars_come_from_debian_or_the_override(tmp_path, monkeypatch):
    monkeypatch.setattr(spark, "JAR_DIR", tmp_path)
    with pytest.raises(QadminError, match="apt-get install libpostgresql-jdbc-java"):
        spark.jars(["postgresql.jar"])
    (tmp_path / "postgresql.jar").write_bytes(b"")
    (tmp_path / "mariadb-java-client.jar").write_bytes(b"")
    # every driver present goes to the session, not only the one needed now
    assert spark.jars(["postgresql.jar"]) == [
        str(tmp_path / "postgresql.jar"),
        str(tmp_path / "mariadb-java-client.jar"),
    ]
    monkeypatch.setenv("QADMIN_SPARK_JARS", f"{tmp_path / 'postgresql.jar'}")
    assert spark.jars(["mariadb-java-client.jar"]) == [str(tmp_path / "postgresql.jar")]


def test_master_and_remote_resolve_from_options_then_environment(monkeypatch):
    assert spark.Where.resolve(None, None) == spark.Where("local[*]", None)
    monkeypatch.setenv("QADMIN_SPARK_MASTER", "spark://m:7077")
    assert spark.Where.resolve(None, None).master == "spark://m:7077"
    assert spark.Where.resolve("yarn", None).master == "yarn"
    monkeypatch.delenv("QADMIN_SPARK_MASTER")
    monkeypatch.setenv("SPARK_REMOTE", "sc://c:15002")
    assert spark.Where.resolve(None, None) == spark.Where(None, "sc://c:15002")
    with pytest.raises(QadminError, match="not both"):
        spark.Where.resolve("local[2]", "sc://c:15002")
