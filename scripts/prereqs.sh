#!/usr/bin/env bash
# prereqs.sh [chaos|test]: checks, in seconds, what the long set-up and the
# runs need, before any of it starts, and names the fix for each miss:
# Go at least go.mod's version, Java 17+, Maven, permission to create
# namespaces (the local cluster's pods run in their own mount and UTS
# namespaces), and a cgroup v2 hierarchy (NetworkPolicy). For
# `test`, also Chromium (a test renders the HTML report in it): installed
# with apt-get when run as root on Debian, otherwise named. etcd and the
# control plane are built from Go modules by make k8s-bin; Kafka's jars come
# from Maven Central (make kafka-dist).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
what="${1:-chaos}"
problems=()

need_go="$(awk '$1=="go" {print $2; exit}' "$root/go.mod")"
if ! command -v go >/dev/null 2>&1; then
	problems+=("Go is not on PATH: install Go $need_go or later (https://go.dev/dl/)")
else
	have_go="$(go env GOVERSION)"; have_go="${have_go#go}"
	if [[ "$(printf '%s\n%s\n' "$need_go" "$have_go" | sort -V | head -n1)" != "$need_go" ]]; then
		problems+=("Go $have_go is older than go.mod's $need_go: install Go $need_go or later")
	fi
fi

if ! command -v java >/dev/null 2>&1; then
	problems+=("java is not on PATH: install Java 17 or later (Debian: apt-get install openjdk-17-jre-headless)")
else
	java_major="$(java -version 2>&1 | awk -F'"' '/version/ {print $2; exit}' | cut -d. -f1)"
	if [[ ! "$java_major" =~ ^[0-9]+$ || "$java_major" -lt 17 ]]; then
		problems+=("java is version '${java_major:-unknown}': Kafka 4 needs Java 17 or later (Debian: apt-get install openjdk-17-jre-headless)")
	fi
fi

command -v "${MVN:-mvn}" >/dev/null 2>&1 ||
	problems+=("mvn is not on PATH: install Maven, which fetches Kafka's jars (Debian: apt-get install maven)")

if ! unshare --mount --uts true 2>/dev/null; then
	problems+=("cannot create mount and UTS namespaces (unshare --mount --uts): run as root, or with CAP_SYS_ADMIN; the local cluster runs each pod in its own")
fi

# The local cluster enforces NetworkPolicy (the partition faults) with a
# cgroup v2 per pod; without the hierarchy every policy is refused.
mountinfo="$(<"${PREREQS_MOUNTINFO:-/proc/self/mountinfo}")" || mountinfo=""
if [[ "$mountinfo" != *" - cgroup2 "* ]]; then
	problems+=("no cgroup v2 hierarchy is mounted: the local cluster needs one to enforce NetworkPolicy (mount -t cgroup2 none /sys/fs/cgroup/unified)")
fi

if [[ "$what" == test ]] && ! command -v chromium >/dev/null 2>&1; then # report/chromium_test.go runs "chromium"
	if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
		echo "prereqs: installing chromium (a test renders the HTML report in it)"
		export DEBIAN_FRONTEND=noninteractive
		if ! { apt-get install -y -q chromium >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }; }; then
			problems+=("chromium: apt-get install chromium failed; install it by hand")
		fi
	else
		problems+=("chromium is not on PATH: a test renders the HTML report in it (Debian, as root: apt-get install chromium)")
	fi
fi

if [[ ${#problems[@]} -gt 0 ]]; then
	echo "prereqs: missing before make $what can start:" >&2
	printf '  - %s\n' "${problems[@]}" >&2
	exit 2
fi
echo "prereqs: ok (go $(go env GOVERSION | sed 's/^go//'), java ${java_major}, $("${MVN:-mvn}" -v 2>/dev/null | sed -n 's/.*Apache Maven \([0-9.]*\).*/maven \1/p' | head -n1))"
