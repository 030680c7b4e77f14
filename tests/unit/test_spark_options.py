"""What qadmin hands to Spark: the password only as a connection property, never in the URL;
the MariaDB/MySQL URL scheme Spark quotes correctly; the JDBC drivers found or named."""

from __future__ import annotations

import re

import pytest

from qadmin.engines import open_engine
from qadmin.errors import QadminError, UnsupportedError, UsageError
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


@pytest.mark.parametrize(
    "master",
    [
        *("local", "local[2]", "local[*]", "local[4,2]"),
        *("spark://m:7077", "spark://a:7077,b:7077", "yarn", "k8s://https://api:6443"),
    ],
)
def test_spark_masters_are_accepted(master):
    assert spark.Where.resolve(master, None).master == master


@pytest.mark.parametrize(("master", "remote"), [("foo://bar", None), (None, "http://c:15002")])
def test_a_bad_master_or_remote_is_a_usage_error(master, remote):
    with pytest.raises(UsageError, match=r"(spark|sc)://HOST:PORT"):
        spark.Where.resolve(master, remote)


def test_spark_conf_takes_spark_keys_only():
    where = spark.Where.resolve("local[2]", None, 5, ("spark.driver.port=40000",))
    assert where.conf == (("spark.driver.port", "40000"),) and where.timeout_s == 5
    with pytest.raises(UsageError, match=r"spark\.KEY=VALUE"):
        spark.Where.resolve("local[2]", None, 5, ("driver.port",))


@pytest.mark.parametrize(
    "item",
    [
        *("spark.sql.shuffle.partitions=abc", "spark.cores.max=0", "spark.executor.cores=1.5"),
        *("spark.driver.port=70000", "spark.blockManager.port=x", "spark.executor.memory=lots"),
        *("spark.driver.memory=-1g", "spark.ui.enabled=yes"),
    ],
)
def test_a_bad_value_for_a_known_spark_setting_is_a_usage_error(item):
    with pytest.raises(UsageError, match=rf"--spark-conf {re.escape(item)}: Spark takes"):
        spark.Where.resolve(None, "sc://c:15002", 5, (item,))


def test_good_values_and_unknown_settings_pass():
    items = ("spark.sql.shuffle.partitions=4", "spark.driver.port=0", "spark.executor.memory=512m")
    items += ("spark.driver.maxResultSize=2GB", "spark.ui.enabled=True", "spark.foo.bar=any")
    assert len(spark.Where.resolve("local[2]", None, 5, items).conf) == len(items)


def test_the_hosts_checked_before_starting():
    assert spark.Where("spark://m1:7077,m2").hosts() == [("m1", 7077), ("m2", 7077)]
    assert spark.Where(None, "sc://c/;user_id=x").hosts() == [("c", 15002)]
    assert spark.Where("yarn").hosts() == []
    assert spark.Where("spark://127.0.0.1:7077").on_this_host
    assert not spark.Where(None, "sc://spark-connect:15002").on_this_host


def test_multi_host_warnings_name_a_loopback_database_and_an_unshared_folder(tmp_path):
    engine = open_engine("postgresql://app@127.0.0.1/sales")
    remote = spark.Where("spark://spark-master:7077")
    found = spark.readiness(remote, engine, [tmp_path])
    assert any("127.0.0.1" in line and "its own host" in line for line in found)
    assert any(str(tmp_path) in line and "same path" in line for line in found)
    named = open_engine("postgresql://app@db.internal/sales")
    assert not any("own host" in x for x in spark.readiness(remote, named, []))
    assert spark.readiness(spark.Where("spark://127.0.0.1:7077"), engine, [tmp_path]) == []


def test_a_missing_jdbc_driver_names_the_jar_and_where_it_goes():
    engine = open_engine("postgresql://app@db1/sales")
    failure = RuntimeError("x" * 5000 + " java.lang.ClassNotFoundException: org.postgresql.Driver")
    on_connect = str(spark.explain(failure, spark.Where(None, "sc://c:15002"), engine))
    assert "--jars /usr/share/java/postgresql.jar" in on_connect and "server's host" in on_connect
    connect_text = RuntimeError("(java.lang.ClassNotFoundException) org.postgresql.Driver")
    assert str(spark.explain(connect_text, spark.Where(None, "sc://c:15002"), engine)) == on_connect
    on_cluster = str(spark.explain(failure, spark.Where("spark://m:7077"), engine))
    assert "spark.jars" in on_cluster and "$SPARK_HOME/jars" in on_cluster
    other = str(spark.explain(RuntimeError("boom\n\tat x.y\n" * 500), spark.Where(), None))
    assert other == "spark: boom"


def test_with_qadmin_spark_jars_the_missing_driver_line_names_the_jars_sent(monkeypatch):
    engine = open_engine("postgresql://app@db1/sales")
    monkeypatch.setenv("QADMIN_SPARK_JARS", "/opt/jdbc/mariadb-java-client-3.4.jar")
    failure = RuntimeError("java.lang.ClassNotFoundException: org.postgresql.Driver")
    line = str(spark.explain(failure, spark.Where("local[2]"), engine))
    assert "QADMIN_SPARK_JARS sent /opt/jdbc/mariadb-java-client-3.4.jar" in line
    assert "qadmin ships" not in line  # /usr/share/java/postgresql.jar was not sent
    assert "org.postgresql.Driver" in line
