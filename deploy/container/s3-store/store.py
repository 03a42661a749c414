"""Starts OpenStack Swift as a one-node S3-compatible store and keeps it running.

Writes the configuration (one device under /srv/node, one replica, rings for the three servers
on loopback, the proxy with s3api and tempauth on 0.0.0.0:8080), starts the four servers, makes
the bucket S3_BUCKET once the proxy answers, then waits; SIGTERM stops the servers. Exits when
one of them exits, so the orchestrator restarts the container.
"""
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

from swift.common.internal_client import InternalClient
from swift.common.ring import RingBuilder


def required(name):
    value = os.environ.get(name, "").strip()
    if not value:
        sys.exit(f"svc-s3-store: set {name}")
    return value


access_key = required("S3_ACCESS_KEY_ID")
secret_key = required("S3_SECRET_ACCESS_KEY")
bucket = required("S3_BUCKET")
if access_key.count(":") != 1:
    sys.exit('svc-s3-store: S3_ACCESS_KEY_ID must be "account:user", e.g. svc:svc')
account, user = access_key.split(":")
port = int(os.environ.get("S3_PORT", "8080"))
devices = os.environ.get("S3_DEVICES", "/srv/node")
os.makedirs(os.path.join(devices, "d1"), exist_ok=True)
conf = tempfile.mkdtemp(prefix="swift-")
ports = {"account": 6202, "container": 6201, "object": 6200}

with open(os.path.join(conf, "swift.conf"), "w") as f:
    # The hash suffix must stay the same for the life of the data: kept beside it.
    suffix_file = os.path.join(devices, ".hash-suffix")
    if not os.path.exists(suffix_file):
        with open(suffix_file, "w") as s:
            s.write(secrets.token_hex(8))
    with open(suffix_file) as s:
        suffix = s.read().strip()
    f.write(f"[swift-hash]\nswift_hash_path_suffix = {suffix}\n"
            "[storage-policy:0]\nname = Policy-0\ndefault = yes\n")

for name, server_port in ports.items():
    builder = RingBuilder(0, 1, 0)
    builder.add_dev({"id": 0, "region": 1, "zone": 1, "ip": "127.0.0.1", "port": server_port,
                     "replication_ip": "127.0.0.1", "replication_port": server_port,
                     "device": "d1", "weight": 1.0, "meta": ""})
    builder.rebalance()
    builder.get_ring().save(os.path.join(conf, f"{name}.ring.gz"))


def common(bind_ip, bind_port):
    return (f"[DEFAULT]\nbind_ip = {bind_ip}\nbind_port = {bind_port}\nworkers = 0\n"
            f"user = swift\nswift_dir = {conf}\nlog_address = {conf}/no-syslog\n")


for name, server_port in ports.items():
    with open(os.path.join(conf, f"{name}-server.conf"), "w") as f:
        f.write(common("127.0.0.1", server_port)
                + f"devices = {devices}\nmount_check = false\ndisable_fallocate = true\n"
                + f"[pipeline:main]\npipeline = {name}-server\n"
                + f"[app:{name}-server]\nuse = egg:swift#{name}\n")

def section(name):
    """The name the pipeline gives a filter: proxy-logging is the one spelt with a hyphen."""
    return "proxy-logging" if name == "proxy_logging" else name


filters = ["catch_errors", "gatekeeper", "healthcheck", "proxy_logging", "listing_formats",
           "copy", "slo", "dlo", "versioned_writes"]
with open(os.path.join(conf, "proxy-server.conf"), "w") as f:
    f.write(common("0.0.0.0", port)
            + "[pipeline:main]\npipeline = catch_errors gatekeeper healthcheck proxy-logging "
            + "cache listing_formats s3api tempauth copy slo dlo versioned_writes proxy-logging "
            + "proxy-server\n[app:proxy-server]\nuse = egg:swift#proxy\naccount_autocreate = true\n"
            # No memcached: a closed port makes Swift run uncached.
            + "[filter:cache]\nuse = egg:swift#memcache\nmemcache_servers = 127.0.0.1:1\n"
            + "[filter:s3api]\nuse = egg:swift#s3api\nlocation = us-east-1\n"
            + f"[filter:tempauth]\nuse = egg:swift#tempauth\nuser_{account}_{user} = {secret_key} .admin\n"
            + "".join(f"[filter:{section(name)}]\nuse = egg:swift#{name}\n" for name in filters))

# -v: the servers log to stderr (no syslog in a container).
servers = [subprocess.Popen([f"/usr/bin/swift-{name}-server", os.path.join(conf, f"{name}-server.conf"), "-v"])
           for name in [*ports, "proxy"]]


def stop(code=0):
    for server in servers:
        if server.poll() is None:
            server.terminate()
    for server in servers:
        server.wait()
    sys.exit(code)


signal.signal(signal.SIGTERM, lambda *_: stop())
signal.signal(signal.SIGINT, lambda *_: stop())

# The bucket: a container of the account, made through Swift's internal client (an in-process
# proxy without auth; tempauth's own tokens would need memcached).
with open(os.path.join(conf, "internal-client.conf"), "w") as f:
    f.write(f"[DEFAULT]\nswift_dir = {conf}\nlog_address = {conf}/no-syslog\n"
            "[pipeline:main]\npipeline = catch_errors cache proxy-server\n"
            "[app:proxy-server]\nuse = egg:swift#proxy\naccount_autocreate = true\n"
            "[filter:cache]\nuse = egg:swift#memcache\nmemcache_servers = 127.0.0.1:1\n"
            "[filter:catch_errors]\nuse = egg:swift#catch_errors\n")
client = InternalClient(os.path.join(conf, "internal-client.conf"), "svc-s3-store", 1)
deadline = time.time() + 120
while True:
    try:
        client.create_container(f"AUTH_{account}", bucket)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthcheck") as response:
            response.read()
        break
    except Exception as error:  # the servers are still starting
        if any(server.poll() is not None for server in servers):
            print("svc-s3-store: a server exited during start", flush=True)
            stop(1)
        if time.time() > deadline:
            print(f"svc-s3-store: the store did not answer in 120 s: {error}", flush=True)
            stop(1)
        time.sleep(0.2)
print(f"svc-s3-store: bucket {bucket} ready on port {port}", flush=True)

os.wait()  # returns when any server exits
print("svc-s3-store: a server exited", flush=True)
stop(1)
