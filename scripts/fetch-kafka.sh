#!/usr/bin/env bash
# fetch-kafka.sh VERSION: fetch Apache Kafka VERSION (default 4.4.0) from Maven
# Central as plain jars, with no tarball and no Docker image.
#
# It writes .cache/kafka/VERSION/libs/*.jar (every runtime jar of the broker,
# the storage tool and the perf tools), checks that they run a single-node
# broker, which also records .cache/kafka/VERSION/kafka.jsa and storage.jsa
# (class-data-sharing archives for faster starts, as the apache/kafka image
# has), and marks the result complete with
# libs/.complete. A second run finds that mark and exits at once. Run a broker
# with:
#   java -Dlog4j2.configurationFile=internal/kafkadist/log4j2.properties \
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

[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "version '$version' is not of the form X.Y.Z"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# The versions table: for each Kafka version line, the profile of
# internal/kafkadist/pom.xml and the versions of what the line needs on top of Kafka
# (args), and how its JVMs find their logging config (log_opt). To add a
# line, add a row here and, if it needs other artifacts, a profile in the pom.
#   kafka4: Kafka 4.x (KRaft only), log4j2 backend.
#   kafka3: Kafka 3.7.x to 3.9.x (KRaft or ZooKeeper; 3.7 is the first line
#           with an apache/kafka image), reload4j as Kafka's poms bring it,
#           plus org.apache.zookeeper:zookeeper at 3.8.4, the version the
#           poms of 3.7.2, 3.8.1 and 3.9.x name, for the ZooKeeper mode.
case "$version" in
4.*)
	args="-Pkafka4 -Dlog4j2.version=2.26.1 -Dslf4j2.version=2.0.17"
	log_opt="-Dlog4j2.configurationFile=$root/internal/kafkadist/log4j2.properties"
	;;
3.7.* | 3.8.* | 3.9.*)
	args="-Pkafka3 -Dzookeeper.version=3.8.4"
	log_opt="-Dlog4j.configuration=file:$root/internal/kafkadist/log4j.properties"
	;;
*) die "no row for Kafka $version in the versions table of $0 (known lines: 4.x, 3.7.x to 3.9.x)" ;;
esac

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
	-f "$root/internal/kafkadist/pom.xml" \
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
# The ID is the last line: the broker logging config logs to stdout too.
uuid=$(java "$log_opt" -cp "$tmp/*" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1) ||
	die "java -cp '$tmp/*' kafka.tools.StorageTool random-uuid failed"
say "classpath loads (random cluster id: $uuid)"

rm -rf "$libs"
mv "$tmp" "$libs"
trap 'rm -rf "$libs"' EXIT # until .complete is written

# Run a real single-node broker: the proof that these jars run Kafka. Its
# graceful exit also writes a class-data-sharing archive of the classes it
# loaded (as the apache/kafka image's build does with its kafka.jsa), which
# cuts a broker's start-up time by about 40%; its format writes one for the
# storage tool (the image's storage.jsa). The archive is only valid for
# this exact classpath and JVM build; a JVM that cannot use it ignores it.
check="$dest/check"
rm -rf "$check" "$dest/kafka.jsa" "$dest/kafka.jsa.partial" "$dest/storage.jsa" "$dest/storage.jsa.partial"
# Ports are picked below the kernel's ephemeral range, where no outgoing
# connection (Maven's, or the control plane build's next to this one) can
# hold them between the check and the broker's bind. A port can still be
# taken in that moment, so the check tries up to three times, each with new
# ports; the broker's own ERROR lines say why an attempt failed.
ephemeral_low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
# A range tuned to start low leaves no room below it: then any ports will
# do, and the retries cover a collision.
((ephemeral_low > 11000)) || ephemeral_low=30000
free_port() { # a port on 127.0.0.1 that nothing listens on, other than $1
	local p
	while :; do
		p=$((10000 + RANDOM % (ephemeral_low - 10000)))
		[[ $p != "${1:-}" ]] || continue
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
}
why() { # why LOG: the log's error lines, or its tail when it has none
	grep -m 8 -E ' (ERROR|FATAL) |Exception' "$1" || tail -20 "$1"
}

# run_check ATTEMPT: format and start a single-node broker, wait for it to
# run, stop it. Returns 1 (with the reason said) when it exits first.
run_check() {
	rm -rf "$check" "$dest/kafka.jsa.partial" "$dest/storage.jsa.partial"
	mkdir -p "$check"
	local broker_port controller_port
	broker_port=$(free_port)
	controller_port=$(free_port "$broker_port")
	cat >"$check/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller_port
listeners=PLAINTEXT://127.0.0.1:$broker_port,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=PLAINTEXT://127.0.0.1:$broker_port
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$check/data
offsets.topic.replication.factor=1
PROPS
	say "check $1/3: formatting a single-node broker's storage with kafka.tools.StorageTool (ports $broker_port, $controller_port), recording $dest/storage.jsa"
	java -Xmx256m -XX:ArchiveClassesAtExit="$dest/storage.jsa.partial" "$log_opt" -cp "$libs/*" kafka.tools.StorageTool format \
		--cluster-id="$uuid" -c "$check/server.properties" >"$check/format.log" 2>&1 ||
		die "kafka.tools.StorageTool format failed: $(tail -20 "$check/format.log")"

	say "check $1/3: starting it with kafka.Kafka, recording $dest/kafka.jsa"
	java -Xmx512m -Xms128m -XX:ArchiveClassesAtExit="$dest/kafka.jsa.partial" "$log_opt" \
		-cp "$libs/*" kafka.Kafka "$check/server.properties" >"$check/broker.log" 2>&1 &
	broker_pid=$!
	local start=$SECONDS
	until grep -q "Transitioning from RECOVERY to RUNNING" "$check/broker.log"; do
		if ! kill -0 "$broker_pid" 2>/dev/null; then
			wait "$broker_pid" || true
			say "check $1/3: the broker exited before it ran:"
			why "$check/broker.log" >&2
			return 1
		fi
		((SECONDS - start < 180)) || die "the broker did not reach RUNNING in 180s: $(why "$check/broker.log")"
		sleep 0.5
	done
	say "the broker is RUNNING after $((SECONDS - start))s; stopping it (SIGTERM)"
	kill -TERM "$broker_pid"
	wait "$broker_pid" || true
}
broker_pid=
trap '[[ -z $broker_pid ]] || kill -9 "$broker_pid" 2>/dev/null || true; rm -rf "$libs" "$check"' EXIT
attempt=1
until run_check "$attempt"; do
	((attempt < 3)) || die "the broker exited before it ran, three times (reasons above)"
	attempt=$((attempt + 1))
done
for jsa in kafka storage; do
	if [[ -s $dest/$jsa.jsa.partial ]]; then
		mv "$dest/$jsa.jsa.partial" "$dest/$jsa.jsa"
		say "class-data-sharing archive: $dest/$jsa.jsa ($(du -h "$dest/$jsa.jsa" | cut -f1))"
	else
		rm -f "$dest/$jsa.jsa.partial"
		say "warning: the JVM wrote no class-data-sharing archive $jsa.jsa; its JVMs will start without one"
	fi
done
rm -rf "$check"

trap - EXIT
{
	echo "kafka.version=$version"
	echo "args=$args"
	echo "jars=$count"
} >"$libs/.complete"
say "Kafka $version is ready in $libs"
