#!/usr/bin/env bash
# fetch-kafka.sh VERSION: fetch Apache Kafka VERSION (default 4.4.0) from Maven
# Central as plain jars, with no tarball and no Docker image.
#
# It writes .cache/kafka/VERSION/libs/*.jar (every runtime jar of the broker,
# the storage tool and the perf tools) and marks the result complete with
# libs/.complete. A second run finds that mark and exits at once. Run a broker
# with:
#   java -Dlog4j2.configurationFile=kafkadist/log4j2.properties \
#        -cp '.cache/kafka/VERSION/libs/*' kafka.Kafka server.properties
# and format its storage with kafka.tools.StorageTool.
#
# Needs java (17+) and mvn on PATH (Debian: openjdk-17-jre-headless, maven).
# MVN overrides the Maven command (default: mvn). Works from an empty ~/.m2.
set -euo pipefail

default_version=4.4.0
version="${1:-${KAFKA_VERSION:-$default_version}}"

say() { printf 'fetch-kafka: %s\n' "$*"; }
die() { printf 'fetch-kafka: error: %s\n' "$*" >&2; exit 1; }

# The versions table: which profile of kafkadist/pom.xml a Kafka version line
# uses, and the versions of what that line needs on top of Kafka. To add a
# line, add a row here and, if it needs other artifacts, a profile in the pom.
#   kafka4: Kafka 4.x (KRaft only), log4j2 backend.
#   kafka3: Kafka 3.9.x, plus org.apache.zookeeper:zookeeper for ZooKeeper mode.
line_args() {
	case "$1" in
	4.*) echo "-Pkafka4 -Dlog4j2.version=2.26.1 -Dslf4j2.version=2.0.17" ;;
	3.9.*) echo "-Pkafka3 -Dzookeeper.version=3.9.5" ;;
	*) return 1 ;;
	esac
}

[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "version '$version' is not of the form X.Y.Z"
args="$(line_args "$version")" || die "no row for Kafka $version in the versions table of $0 (known lines: 4.x, 3.9.x)"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/.cache/kafka/$version"
libs="$dest/libs"

if [[ -f $libs/.complete ]]; then
	say "Kafka $version is already in $libs"
	exit 0
fi

command -v java >/dev/null || die "java not found on PATH (Debian: apt-get install -y openjdk-17-jre-headless)"
mvn_cmd="${MVN:-mvn}"
command -v "$mvn_cmd" >/dev/null || die "$mvn_cmd not found on PATH (Debian: apt-get install -y maven)"

mkdir -p "$dest"
# .cache/ holds downloads only: keep it out of git whatever .gitignore says.
[[ -f $root/.cache/.gitignore ]] || printf '*\n' >"$root/.cache/.gitignore"

# One fetch at a time per version; a waiting run finds .complete afterwards.
exec 9>"$dest/.lock"
if ! flock -n 9; then
	say "another fetch of Kafka $version is running; waiting for it"
	flock 9
fi
if [[ -f $libs/.complete ]]; then
	say "Kafka $version is already in $libs"
	exit 0
fi

tmp="$dest/libs.partial"
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT

say "resolving Kafka $version ($args) from Maven Central into $tmp"
start=$SECONDS
# shellcheck disable=SC2086 # $args is a list of words from the table above.
"$mvn_cmd" -B -q -Dstyle.color=never \
	-f "$root/kafkadist/pom.xml" \
	$args \
	-Dkafka.version="$version" \
	-Dkafkadist.libs="$tmp" \
	dependency:copy-dependencies ||
	die "mvn dependency:copy-dependencies failed for Kafka $version (network to Maven Central? see the output above)"
count=$(find "$tmp" -name '*.jar' | wc -l)
say "copied $count jars ($(du -sh "$tmp" | cut -f1)) in $((SECONDS - start))s"

say "checking the main classes"
need_class() { # need_class JAR_GLOB CLASS_FILE
	local jar
	for jar in "$tmp"/$1; do
		[[ -f $jar ]] || continue
		# Entry names are stored uncompressed in a jar's central directory.
		if grep -aqF "$2" "$jar"; then
			return 0
		fi
	done
	die "no jar matching $1 holds $2"
}
need_class "kafka_2.13-$version.jar" kafka/Kafka.class
need_class "kafka_2.13-$version.jar" kafka/tools/StorageTool.class
need_class "kafka-tools-$version.jar" org/apache/kafka/tools/ProducerPerformance.class
need_class "kafka-tools-$version.jar" org/apache/kafka/tools/EndToEndLatency.class

say "running kafka.tools.StorageTool random-uuid to check that the classpath loads"
uuid=$(java -Dlog4j2.configurationFile="$root/kafkadist/tools-log4j2.properties" \
	-cp "$tmp/*" kafka.tools.StorageTool random-uuid) ||
	die "java -cp '$tmp/*' kafka.tools.StorageTool random-uuid failed"
say "classpath loads (random cluster id: $uuid)"

rm -rf "$libs"
mv "$tmp" "$libs"
trap - EXIT
{
	echo "kafka.version=$version"
	echo "args=$args"
	echo "jars=$count"
} >"$libs/.complete"
say "Kafka $version is ready in $libs"
