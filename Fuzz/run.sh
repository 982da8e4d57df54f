#!/usr/bin/env bash
# Builds the fuzz target with libFuzzer and AddressSanitizer and runs it.
# Usage: Fuzz/run.sh [SECONDS]   (default 600). New crashers land in Fuzz/FailCases/, which the test
# suite replays (Tests/ConformanceTests/FuzzCrasherTests.swift): commit them with the fix.
# FUZZ_DECODERS=webdav,s3 (names of FuzzGroup in Sources/FuzzDecoders) feeds only those decoders;
# unset, all but webdav, s3, httpdate and model, which reach Foundation code that leaks and run on
# their own without leak detection (see FuzzGroup).
# Arguments after SECONDS go to libFuzzer.
set -euo pipefail
cd "$(dirname "$0")"
# A target of the toolkit's own package (Package.swift), built on its own with its trait.
swift build --package-path .. -c release --traits Fuzzing --product FuzzDecoders -Xswiftc -sanitize=fuzzer,address --scratch-path .build-fuzz
corpus=$(mktemp -d)
cp $(find ../Fixtures/v2-json ../Fixtures/v1-json -name '*.json') ../Fixtures/v2-binary/valid/*.bin ../Fixtures/v2-binary/noncanonical/*.bin ../Fixtures/v2-binary/invalid/*.bin ../Fixtures/v2-binary/blobs/*.container ../Fixtures/wrappers/valid/*.cdeevent ../Fixtures/wrappers/damaged/*.cdeevent FailCases/* "$corpus"/ 2>/dev/null || true
# The real keyed archives (Spec/device-state.md 3.8), all named `elements`: numbered copies.
index=0
while IFS= read -r -d '' archive; do index=$((index + 1)); cp "$archive" "$corpus/keyed-archive-$index"; done \
    < <(find ../Fixtures/external/ticoredatasync -name elements -print0)
# The files of the TICoreDataSync fixture folders (Spec/ticds.md 3): property lists, change sets,
# WholeStores, encrypted or not (the fuzz target decrypts with the `encrypted` fixture's key).
index=0
while IFS= read -r -d '' file; do index=$((index + 1)); cp "$file" "$corpus/ticds-$index-$(basename "$file")"; done \
    < <(find ../Fixtures/ticds -path '*/folder/*' -type f -print0)
# The models' `contents` XML (Spec/model.md 3), good and broken: numbered copies.
index=0
while IFS= read -r -d '' model; do index=$((index + 1)); cp "$model" "$corpus/model-$index"; done \
    < <(find ../Fixtures/models ../Fixtures/external -name contents -print0)
# Remote listings (WebDAV multistatus, S3 ListBucketResult, Ensembles Server answers) and HTTP dates.
cp Seeds/* "$corpus"/
mkdir -p FailCases
# Foundation's XMLParser leaks on every malformed document: not the toolkit's leak (lsan.supp).
export LSAN_OPTIONS="suppressions=$PWD/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
leaks=()
# (and no check at exit either, which would report Foundation's leaks as an empty crash input)
case ",${FUZZ_DECODERS:-}," in *,webdav,* | *,s3,* | *,httpdate,* | *,model,*) leaks=(-detect_leaks=0) && export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" ;; esac
./.build-fuzz/release/FuzzDecoders "$corpus" -dict=v2-json.dict -max_total_time="${1:-600}" -rss_limit_mb=2048 -artifact_prefix=FailCases/ -print_final_stats=1 \
    ${leaks[@]+"${leaks[@]}"} "${@:2}"
echo "corpus size: $(ls "$corpus" | wc -l) files"
