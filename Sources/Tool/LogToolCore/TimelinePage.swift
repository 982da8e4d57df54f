import Foundation
import EnsemblesToolkit

/// The timeline as one self-contained HTML page (Spec/timeline.md): inline CSS, SVG and script,
/// nothing fetched. The SVG and the tables are written here, so the page reads without
/// JavaScript; the script only adds zoom, pan, the time axis and the detail panel.
enum TimelinePage {
    static let plotLeft = 240.0, plotWidth = 1100.0, laneHeight = 36.0, top = 44.0
    /// Above this many events a lane shows counts per bin rather than one mark per event.
    static let markLimit = 4000
    static let bins = 400
    /// At most this many lanes: above it, the stores after the first `laneLimit - 1` share the
    /// last lane, "+K more stores" (Spec/timeline.md 2).
    static let laneLimit = 50

    static func html(_ reports: [TimelineReport], source: String, asStore: String?) -> String {
        var body = ""
        for report in reports { body += section(report) }
        let counts = reports.flatMap(\.findings).reduce(into: [String: Int]()) { $0[$1.diagnostic.severity.rawValue, default: 0] += 1 }
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
            <title>Timeline of \(escape(source))</title>
            <style>\(css)</style></head>
            <body>
            <header><h1>Timeline of \(escape(source))</h1>
            <p class="summary">\(reports.count) ensemble(s); \(reports.reduce(0) { $0 + $1.lanes.count }) store(s); \
            \(reports.reduce(0) { $0 + $1.marks.count }) event(s) and baseline(s); findings: \(counts["error"] ?? 0) error(s), \
            \(counts["warning"] ?? 0) warning(s), \(counts["info"] ?? 0) info(s)\(asStore.map { "; seen as device \(escape($0))" } ?? "")</p>
            <p class="controls"><button id="axis" type="button">x: global count (switch to time)</button> \
            <button id="reset" type="button">reset zoom</button> <span class="hint">wheel: zoom, drag: pan, click a mark or a table row: details</span></p>
            </header>
            \(legend)
            \(body)
            <aside id="detail" aria-live="polite"><p>Click an event, a finding or a row of the findings table for its details.</p></aside>
            <script>\(script)</script>
            </body></html>

            """
    }

    /// The label column ends here: lane labels, shortened to fit, stay left of it, and the dot of
    /// an unregistered store sits between it and the plot (Spec/timeline.md 2).
    static let labelRight = plotLeft - 22
    /// Characters of a lane label in the page's monospace 12 px font (about 7.2 px each) that fit
    /// the label column; the script shortens further where the browser's font is wider.
    static let labelCharacters = 26
    /// The folder row: squares of 12 px, 16 px apart, wrapped onto as many rows as they need.
    static let folderTop = 8.0, folderStep = 16.0
    static let axisHeight = 36.0

    /// A lane label that fits its column: cut with an ellipsis (the full name is the label's title).
    static func fitted(_ text: String) -> String {
        text.count <= labelCharacters ? text : String(text.prefix(labelCharacters - 1)) + "\u{2026}"
    }

    /// Round values from `low` to `high`, about `count` of them: steps of 1, 2 or 5 times a power
    /// of ten, at least 1 apart (global counts are integers).
    static func ticks(_ low: Double, _ high: Double, count: Int = 10) -> [Double] {
        let span = high - low
        guard span > 0, span.isFinite else { return [low] }
        let raw = span / Double(count)
        let power = pow(10, (log10(raw)).rounded(.down))
        let step = max(1, [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= raw } ?? 10 * power)
        var values: [Double] = []
        var value = (low / step).rounded(.up) * step
        while value <= high + step * 1e-9 && values.count < 40 {
            values.append(value)
            value += step
        }
        return values
    }

    static func number(_ value: Double) -> String {
        if let integer = Int64(exactly: value.rounded()) { return String(integer) }
        return String(value)
    }

    /// The kind of an event's mark, which the legend explains (`data-kind`).
    static func kind(ofType type: Int) -> String {
        switch type {
        case 200: "save"
        case 300: "merge"
        case 0: "incomplete"
        default: "other-event"
        }
    }

    /// Stores by their bytes: two named in NFC and NFD are two lanes.
    struct Place: Hashable {
        var store: ExactString
        var globalCount: Int64
    }

    static func section(_ report: TimelineReport) -> String {
        let shownLanes = min(report.lanes.count, laneLimit)
        let more = report.lanes.count - shownLanes + (report.lanes.count > laneLimit ? 1 : 0)
        let laneIndex = Dictionary(
            report.lanes.enumerated().map { (ExactString($1.store), min($0, laneLimit - 1)) }, uniquingKeysWith: { first, _ in first })
        var low = Int64.max, high = Int64.min
        // The axis spans the findings' places too: an event that has no mark (an empty file after
        // the last readable event) is still drawn inside the plot (Spec/timeline.md 2).
        var places = report.marks.map(\.globalCount)
        for finding in report.findings {
            switch finding.placement {
            case .event(_, let globalCount), .dependency(_, let globalCount, _, _): places.append(globalCount)
            case .gap(_, let from, let to): places += [from, to]
            case .lane, .folder: break
            }
        }
        for place in places {
            low = min(low, place)
            high = max(high, place)
        }
        if places.isEmpty { (low, high) = (0, 1) }
        // In doubles: global counts may be anywhere in 0...2^63-1, where `high - low + 1` overflows.
        let span = max(Double(high) - Double(low), 1)
        if high <= low { high = low == Int64.max ? low : low + 1 }
        // The folder row only when a finding is drawn there, wrapped so that every square stays
        // inside the drawing (Spec/timeline.md 3).
        let folderCount = report.findings.filter { if case .folder = $0.placement { true } else { false } }.count
        let perRow = Int(plotWidth / folderStep)
        let folderRows = (folderCount + perRow - 1) / perRow
        let top = folderCount == 0 ? folderTop : folderTop + Double(folderRows) * folderStep + 8
        func x(_ globalCount: Int64) -> Double { plotLeft + (Double(globalCount) - Double(low)) / span * plotWidth }
        func y(_ store: String) -> Double { top + Double(laneIndex[ExactString(store)] ?? 0) * laneHeight + laneHeight / 2 }
        let axisTop = top + Double(shownLanes) * laneHeight
        let height = axisTop + axisHeight
        let width = plotLeft + plotWidth + 40
        var svg =
            "<svg class=\"timeline\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" data-low=\"\(low)\" data-high=\"\(high)\" data-top=\"\(top)\" data-label-right=\"\(labelRight)\" role=\"img\" aria-label=\"lanes of stores with their events and findings\">"
        if folderCount > 0 { svg += "<text class=\"folder-label\" x=\"8\" y=\"\(folderTop + 10)\">folder</text>" }
        for (index, lane) in report.lanes.prefix(shownLanes).enumerated() {
            let laneTop = top + Double(index) * laneHeight
            let shared = more > 0 && index == laneLimit - 1
            svg +=
                shared
                ? "<g class=\"lane more\" data-more=\"\(more)\">"
                : "<g class=\"lane\" data-store=\"\(escape(lane.store))\">"
            svg += "<rect class=\"lane-bg\" x=\"0\" y=\"\(laneTop)\" width=\"\(width)\" height=\"\(laneHeight)\"/>"
            if shared {
                svg += "<text class=\"lane-label\" x=\"8\" y=\"\(laneTop + laneHeight / 2 + 4)\">+\(more) more stores</text></g>"
            } else if lane.registered {
                svg +=
                    "<text class=\"lane-label\" x=\"8\" y=\"\(laneTop + laneHeight / 2 + 4)\"><title>\(escape(lane.store))</title>\(escape(fitted(lane.store)))</text></g>"
            } else {
                // Two lines: the name, and under it that the store is not registered.
                svg +=
                    "<text class=\"lane-label\" x=\"8\" y=\"\(laneTop + laneHeight / 2 - 1)\"><title>\(escape(lane.store)) (unregistered)</title>\(escape(fitted(lane.store)))</text><text class=\"lane-note\" x=\"8\" y=\"\(laneTop + laneHeight / 2 + 12)\">unregistered</text></g>"
            }
        }
        svg += "<g class=\"marks\">"
        // The places of events that have a mark, for the findings about events (a triangle over
        // the mark, else a cross): one key per mark, not a text made per mark.
        var drawn = Set<Place>()
        if report.marks.count <= markLimit {
            for (index, mark) in report.marks.enumerated() {
                if mark.spans.isEmpty {
                    drawn.insert(Place(store: ExactString(mark.store), globalCount: mark.globalCount))
                    svg +=
                        "<circle class=\"mark type-\(mark.type)\(mark.onlyOnDevice ? " device-only" : "")\" data-kind=\"\(mark.onlyOnDevice ? "device-only" : kind(ofType: mark.type))\" data-i=\"\(index)\" data-store=\"\(escape(mark.store))\" cx=\"\(x(mark.globalCount))\" cy=\"\(y(mark.store))\" r=\"5\"><title>\(escape(mark.file))</title></circle>"
                } else {
                    let rows = mark.spans.compactMap { laneIndex[ExactString($0)] }
                    let first = Double(rows.min() ?? 0), last = Double(rows.max() ?? 0)
                    svg +=
                        "<rect class=\"mark baseline\(mark.onlyOnDevice ? " device-only" : "")\" data-kind=\"\(mark.onlyOnDevice ? "device-only" : "baseline")\" data-i=\"\(index)\" data-store=\"\(escape(mark.store))\" x=\"\(x(mark.globalCount) - 4)\" y=\"\(top + first * laneHeight + 4)\" width=\"8\" height=\"\((last - first + 1) * laneHeight - 8)\"><title>\(escape(mark.file))</title></rect>"
                }
            }
        } else {
            for mark in report.marks where mark.spans.isEmpty { drawn.insert(Place(store: ExactString(mark.store), globalCount: mark.globalCount)) }
            // Many events: how many fall in each bin of each lane, darker for more.
            var tally: [Int: [Int: Int]] = [:]
            for mark in report.marks {
                let bin = Int((Double(mark.globalCount) - Double(low)) / span * Double(bins - 1))
                tally[laneIndex[ExactString(mark.store)] ?? 0, default: [:]][bin, default: 0] += 1
            }
            let most = tally.values.flatMap(\.values).max() ?? 1
            for (row, lane) in tally.sorted(by: { $0.key < $1.key }) {
                for (bin, count) in lane.sorted(by: { $0.key < $1.key }) {
                    svg +=
                        "<rect class=\"bin\" data-kind=\"bin\" data-count=\"\(count)\" x=\"\(plotLeft + Double(bin) * plotWidth / Double(bins))\" y=\"\(top + Double(row) * laneHeight + 6)\" width=\"\(plotWidth / Double(bins))\" height=\"\(laneHeight - 12)\" fill-opacity=\"\(0.2 + 0.8 * Double(count) / Double(most))\"/>"
                }
            }
        }
        svg += "</g><g class=\"findings\">"
        var folderIndex = 0
        // Several findings about one event stand side by side, 13 units apart, not on top of each other.
        var slots: [ExactString: Int] = [:]
        for (index, finding) in report.findings.enumerated() {
            let diagnostic = finding.diagnostic
            let tip = "<title>\(escape(diagnostic.code.rawValue)): \(escape(diagnostic.reason))</title>"
            func attributes(_ kind: String, _ extra: String = "") -> String {
                "class=\"finding sev-\(diagnostic.severity.rawValue)\(extra)\" data-kind=\"\(kind)\" data-index=\"\(index)\" data-code=\"\(escape(diagnostic.code.rawValue))\" data-file=\"\(escape(diagnostic.files.first ?? ""))\""
            }
            switch finding.placement {
            case .event(let store, let globalCount):
                let (cx, cy) = (x(globalCount), y(store))
                if drawn.contains(Place(store: ExactString(store), globalCount: globalCount)) {
                    // A triangle in the upper part of the lane, pointing at the event's mark.
                    let slot = slots[ExactString("\(store)\u{0}\(globalCount)"), default: 0]
                    slots[ExactString("\(store)\u{0}\(globalCount)")] = slot + 1
                    let tx = cx + Double(slot) * 13
                    svg +=
                        "<path \(attributes("event-finding")) data-store=\"\(escape(store))\" data-gc=\"\(globalCount)\" data-slot=\"\(slot)\" d=\"M\(tx - 6),\(cy - 16) L\(tx + 6),\(cy - 16) L\(tx),\(cy - 6) Z\">\(tip)</path>"
                } else {
                    // The event has no mark (its file could not be read whole): a cross in its place.
                    svg +=
                        "<path \(attributes("unread-event", " unread")) data-store=\"\(escape(store))\" data-gc=\"\(globalCount)\" d=\"M\(cx - 5),\(cy - 5) L\(cx + 5),\(cy + 5) M\(cx - 5),\(cy + 5) L\(cx + 5),\(cy - 5)\">\(tip)</path>"
                }
            case .gap(let store, let from, let to):
                let (left, right) = (x(from), x(to))
                let first = diagnostic.details["first"].map(JSONWriter().string) ?? ""
                let last = diagnostic.details["last"].map(JSONWriter().string) ?? ""
                svg +=
                    "<rect \(attributes("gap")) data-store=\"\(escape(store))\" data-first=\"\(first)\" data-last=\"\(last)\" data-from=\"\(from)\" data-to=\"\(to)\" x=\"\(min(left, right) + 6)\" y=\"\(y(store) - 14)\" width=\"\(max(4, abs(right - left) - 12))\" height=\"28\"><title>revisions \(first) to \(last) missing</title></rect>"
            case .dependency(let store, let globalCount, let needs, let revision):
                let (x1, y1, y2) = (x(globalCount), y(store), y(needs))
                let anchor = x1 > plotLeft + plotWidth - 60 ? " text-anchor=\"end\"" : ""
                svg +=
                    "<g \(attributes("dependency")) data-store=\"\(escape(store))\" data-needs=\"\(escape(needs))\" data-revision=\"\(revision)\" data-gc=\"\(globalCount)\"><line x1=\"\(x1)\" y1=\"\(y1)\" x2=\"\(x1)\" y2=\"\(y2)\" marker-end=\"url(#arrow)\"/><text x=\"\(anchor.isEmpty ? x1 + 4 : x1 - 4)\" y=\"\(y2 - 4)\"\(anchor)>needs \(revision)</text><title>needs revision \(revision) of \(escape(needs))</title></g>"
            case .lane(let store):
                svg +=
                    "<circle \(attributes("unregistered")) data-store=\"\(escape(store))\" cx=\"\(plotLeft - 12)\" cy=\"\(y(store))\" r=\"6\">\(tip)</circle>"
            case .folder:
                let (column, row) = (folderIndex % perRow, folderIndex / perRow)
                folderIndex += 1
                svg +=
                    "<rect \(attributes("folder")) data-store=\"\" x=\"\(plotLeft + Double(column) * folderStep)\" y=\"\(folderTop + Double(row) * folderStep)\" width=\"12\" height=\"12\">\(tip)</rect>"
            }
        }
        svg +=
            "</g><defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\"/></marker></defs>"
        // The axis: round global counts with their tick lines; the script draws it again on zoom.
        svg += "<g class=\"axis\" data-y=\"\(axisTop)\"><text class=\"axis-title\" x=\"8\" y=\"\(axisTop + 16)\">global count</text>"
        for tick in ticks(Double(low), Double(low) + span) {
            let tx = plotLeft + (tick - Double(low)) / span * plotWidth
            let anchor = tx > plotLeft + plotWidth - 30 ? "end" : "middle"
            svg +=
                "<line class=\"tick\" x1=\"\(tx)\" y1=\"\(axisTop)\" x2=\"\(tx)\" y2=\"\(axisTop + 5)\"/><text class=\"tick-label\" x=\"\(tx)\" y=\"\(axisTop + 16)\" text-anchor=\"\(anchor)\">\(number(tick))</text>"
        }
        svg += "</g></svg>"

        var rows = ""
        for (index, finding) in report.findings.enumerated() {
            let diagnostic = finding.diagnostic
            rows +=
                "<tr data-index=\"\(index)\" class=\"sev-\(diagnostic.severity.rawValue)\"><td>\(escape(diagnostic.code.rawValue))</td><td>\(diagnostic.severity.rawValue)</td><td>\(diagnostic.number.map(String.init) ?? "")</td><td>\(escape(diagnostic.files.joined(separator: ", ")))</td><td>\(escape(diagnostic.reason))</td><td>\(escape(diagnostic.consequence))</td></tr>"
        }
        let data = JSONWriter().string(
            .object(
                JSONObject(
                    [
                        ("low", JSONValue(low)), ("high", JSONValue(high)),
                        ("lanes", .array(report.lanes.map { .string($0.store) })),
                    ] + columnarMarks(report.marks) + [
                        (
                            "findings",
                            .array(
                                report.findings.map {
                                    .array([
                                        .string($0.diagnostic.code.rawValue), .string($0.diagnostic.severity.rawValue),
                                        .array($0.diagnostic.files.map(JSONValue.string)), .string($0.diagnostic.reason), .object($0.diagnostic.details),
                                        $0.diagnostic.number.map { JSONValue(Int64($0)) } ?? .null, .string($0.diagnostic.consequence),
                                    ])
                                })
                        )
                    ])))
        return """
            <section class="ensemble" data-identifier="\(escape(report.identifier))">
            <h2>Ensemble \(escape(report.identifier))</h2>
            \(growthTable(report.growth))
            <div class="plot">\(svg)</div>
            <h3>Findings (\(report.findings.count))</h3>
            <table class="findings-table"><thead><tr><th>code</th><th>severity</th><th>number</th><th>files</th><th>reason</th><th>consequence</th></tr></thead><tbody>\(rows)</tbody></table>
            <script type="application/json" class="timeline-data">\(scriptData(data))</script>
            </section>

            """
    }

    /// The marks as the page embeds them (Spec/timeline.md 4): one column of integers per field,
    /// each a base64 VLQ text (`p` then one number per mark, or `r` then value and run length
    /// pairs, whichever is shorter), strings interned in `strings`, and what a column cannot say
    /// listed apart. About 6 bytes per event instead of one JSON array of 12 values each.
    static func columnarMarks(_ marks: [TimelineReport.Mark]) -> [(String, JSONValue)] {
        var strings: [String] = [], interned: [ExactString: Int64] = [:]
        func intern(_ text: String) -> Int64 {
            if let index = interned[ExactString(text)] { return index }
            strings.append(text)
            interned[ExactString(text)] = Int64(strings.count - 1)
            return Int64(strings.count - 1)
        }
        let stores = marks.map { intern($0.store) }
        let models = marks.map { mark in mark.modelVersion.map { intern($0) + 1 } ?? 0 }
        // Global counts and revisions differ little from the last one (of the same store): their
        // differences are written, when every value is small enough for a JavaScript number to
        // add them up exactly; otherwise the values themselves, as JSON numbers.
        let globalCounts = marks.map(\.globalCount)
        let gcPacked = globalCounts.allSatisfy(packable)
        var gcColumn = globalCounts
        if gcPacked { for index in gcColumn.indices.reversed() where index > 0 { gcColumn[index] -= gcColumn[index - 1] } }
        let revisions = marks.map(\.revision)
        let revisionPacked = revisions.allSatisfy(packable)
        var revisionColumn = revisions
        if revisionPacked {
            var last: [Int64: Int64] = [:]
            for (index, revision) in revisions.enumerated() {
                revisionColumn[index] = revision - last[stores[index], default: 0]
                last[stores[index]] = revision
            }
        }
        // Times as whole numbers of 1/unit seconds: the coarsest of 1, 1/1000 and 1/1,000,000
        // that holds every time exactly (k / unit is the same double again), else microseconds;
        // a time no such number holds (beyond 2^52 units, not finite) is listed apart.
        func ticks(_ time: Double, _ unit: Double) -> Int64? {
            let scaled = (time * unit).rounded()
            guard scaled.isFinite, abs(scaled) <= Double(packedLimit) else { return nil }
            return Int64(scaled)
        }
        let unit =
            [1.0, 1000].first { unit in marks.allSatisfy { mark in ticks(mark.timestamp, unit).map { Double($0) / unit == mark.timestamp } ?? true } }
            ?? 1_000_000
        var timeColumn: [Int64] = [], times: [JSONValue] = [], lastTick: Int64 = 0
        for (index, mark) in marks.enumerated() {
            if let tick = ticks(mark.timestamp, unit) {
                timeColumn.append(tick - lastTick)
                lastTick = tick
            } else {
                timeColumn.append(0)
                times.append(.array([JSONValue(Int64(index)), .number(JSONNumber(mark.timestamp))]))
            }
        }
        // A file is named by its global count, store and revision unless listed in `files`.
        var files: [JSONValue] = [], spans: [JSONValue] = [], deviceOnly: [JSONValue] = []
        for (index, mark) in marks.enumerated() {
            if !(gcPacked && revisionPacked) || !exactlyEqual(mark.file, "events/\(mark.globalCount)_\(mark.store)_\(mark.revision).cdeevent") {
                files.append(.array([JSONValue(Int64(index)), .string(mark.file)]))
            }
            if !mark.spans.isEmpty { spans.append(.array([JSONValue(Int64(index)), .array(mark.spans.map(JSONValue.string))])) }
            if mark.onlyOnDevice { deviceOnly.append(JSONValue(Int64(index))) }
        }
        // Differences of values within 2^52 are within 2^53, which the VLQ text holds exactly.
        func column(_ values: [Int64]) -> JSONValue { values.allSatisfy(packable) ? .string(vlq(values)) : .array(values.map { JSONValue($0) }) }
        return [
            ("count", JSONValue(Int64(marks.count))), ("strings", .array(strings.map(JSONValue.string))), ("timeUnit", JSONValue(unit)),
            (
                "columns",
                .object(
                    JSONObject([
                        ("globalCount", gcPacked ? .string(vlq(gcColumn)) : column(globalCounts)), ("store", column(stores)),
                        ("revision", revisionPacked ? .string(vlq(revisionColumn)) : column(revisions)), ("time", .string(vlq(timeColumn))),
                        ("type", column(marks.map { Int64($0.type) })), ("inserts", column(marks.map { Int64($0.inserts) })),
                        ("updates", column(marks.map { Int64($0.updates) })), ("deletes", column(marks.map { Int64($0.deletes) })),
                        ("modelVersion", column(models)),
                    ]))
            ),
            ("files", .array(files)), ("times", .array(times)), ("spans", .array(spans)), ("deviceOnly", .array(deviceOnly)),
        ]
    }

    /// Values a packed column holds: their differences (at most 2^53) a JavaScript number adds
    /// up exactly.
    static let packedLimit: Int64 = 1 << 52
    static func packable(_ value: Int64) -> Bool { value >= -packedLimit && value <= packedLimit }

    static let vlqDigits = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Base64 VLQ, as source maps write it: the first digit holds the sign in its lowest bit and
    /// four bits of the magnitude, every further digit five more; bit 32 says another digit
    /// follows. `p` and a number per value, or `r` and (value, run length) pairs when shorter.
    static func vlq(_ values: [Int64]) -> String {
        func append(_ value: Int64, to out: inout [UInt8]) {
            var rest = value.magnitude >> 4
            var digit = (value.magnitude & 15) << 1 | (value < 0 ? 1 : 0)
            while true {
                if rest != 0 { digit |= 32 }
                out.append(vlqDigits[Int(digit)])
                if rest == 0 { return }
                digit = rest & 31
                rest >>= 5
            }
        }
        var plain: [UInt8] = [UInt8(ascii: "p")], runs: [UInt8] = [UInt8(ascii: "r")]
        plain.reserveCapacity(values.count + 1)
        var index = 0
        while index < values.count {
            let value = values[index]
            append(value, to: &plain)
            var end = index + 1
            while end < values.count && values[end] == value {
                append(value, to: &plain)
                end += 1
            }
            append(value, to: &runs)
            append(Int64(end - index), to: &runs)
            index = end
        }
        return String(decoding: runs.count < plain.count ? runs : plain, as: UTF8.self)
    }

    /// verify's growth figures as two small tables: the single figures in one row, and the
    /// figures counted per kind of file (`files`, `bytes`) with a row each.
    static func growthTable(_ growth: JSONValue) -> String {
        guard let object = growth.objectValue else {
            return "<p class=\"growth\">Growth (verify): \(escape(JSONWriter().string(growth)))</p>"
        }
        func words(_ key: String) -> String {
            var result = ""
            for character in key {
                if character.isUppercase { result += " " + character.lowercased() } else { result.append(character) }
            }
            return escape(result)
        }
        func shown(_ value: JSONValue) -> String {
            switch value {
            case .bool(let flag): return flag ? "yes" : "no"
            case .string(let text): return escape(text)
            case .number:
                let text = JSONWriter().string(value)
                if text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), let double = Double(text) {
                    return String(format: "%.2f", double)
                }
                return text
            default: return escape(JSONWriter().string(value))
            }
        }
        let singles = object.filter { $0.value.objectValue == nil }
        let groups = object.compactMap { member in member.value.objectValue.map { (member.key, $0) } }
        var columns: [String] = []
        for (_, group) in groups { for key in group.keys where !columns.contains(key) { columns.append(key) } }
        // The same columns in the same order on every page, whatever order the figures came in.
        let order = ["events", "baselines", "stores", "data", "debris"]
        columns.sort { (order.firstIndex(of: $0) ?? order.count, $0) < (order.firstIndex(of: $1) ?? order.count, $1) }
        var html = "<div class=\"growth\"><h3>Growth (verify)</h3><table class=\"growth-figures\"><tr>"
        html += singles.map { "<th>\(words($0.key))</th>" }.joined() + "</tr><tr>"
        html += singles.map { "<td>\(shown($0.value))</td>" }.joined() + "</tr></table>"
        if !groups.isEmpty {
            html += "<table class=\"growth-files\"><tr><th></th>" + columns.map { "<th>\(words($0))</th>" }.joined() + "</tr>"
            for (name, group) in groups {
                html += "<tr><th>\(words(name))</th>" + columns.map { "<td>\(group[$0].map(shown) ?? "")</td>" }.joined() + "</tr>"
            }
            html += "</table>"
        }
        return html + "</div>"
    }

    /// JSON text made safe inside a `<script>` element: `<`, `>` and `&` (which occur only in
    /// strings) as `\u003c`, `\u003e`, `\u0026`, so that no value can end the element or change
    /// how the HTML parser reads it (`</script>`, `<!--<script>`); U+2028 and U+2029 as `\u2028`
    /// and `\u2029`. The same JSON value reads back (Spec/timeline.md 2).
    static func scriptData(_ json: String) -> String {
        let bytes = Array(json.utf8)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count + bytes.count / 16)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "<"): result.append(contentsOf: "\\u003c".utf8)
            case UInt8(ascii: ">"): result.append(contentsOf: "\\u003e".utf8)
            case UInt8(ascii: "&"): result.append(contentsOf: "\\u0026".utf8)
            // U+2028 and U+2029 are E2 80 A8 and E2 80 A9 in UTF-8.
            case 0xE2 where index + 2 < bytes.count && bytes[index + 1] == 0x80 && (bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9):
                result.append(contentsOf: (bytes[index + 2] == 0xA8 ? "\\u2028" : "\\u2029").utf8)
                index += 2
            default: result.append(byte)
            }
            index += 1
        }
        return String(decoding: result, as: UTF8.self)
    }

    static func escape(_ text: String) -> String {
        var result = ""
        for character in text.unicodeScalars {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default:
                // Control characters cannot stand in HTML text; show their code instead.
                if character.value < 0x20 && character != "\n" && character != "\t" {
                    result += "\\u{\(String(character.value, radix: 16))}"
                } else {
                    result.unicodeScalars.append(character)
                }
            }
        }
        return result
    }

    /// One entry per kind of mark (`data-kind`), so that every mark drawn is explained.
    static let legend = """
        <section class="legend"><h3>Legend</h3><ul>
        <li data-kind="save"><svg width="16" height="16"><circle class="mark type-200" cx="8" cy="8" r="5"/></svg> save event</li>
        <li data-kind="merge"><svg width="16" height="16"><circle class="mark type-300" cx="8" cy="8" r="5"/></svg> merge event</li>
        <li data-kind="incomplete"><svg width="16" height="16"><circle class="mark type-0" cx="8" cy="8" r="5"/></svg> incomplete event (type 0)</li>
        <li data-kind="other-event"><svg width="16" height="16"><circle class="mark type-100" cx="8" cy="8" r="5"/></svg> event of another type</li>
        <li data-kind="baseline"><svg width="16" height="16"><rect class="mark baseline" x="4" y="0" width="8" height="16"/></svg> baseline, across the stores it names</li>
        <li data-kind="device-only"><svg width="16" height="16"><circle class="mark type-200 device-only" cx="8" cy="8" r="5"/></svg> only on the device (timeline --device): never uploaded to the cloud</li>
        <li data-kind="bin"><svg width="16" height="16"><rect class="bin" x="0" y="3" width="16" height="10" fill-opacity=".6"/></svg> many events: darker for more events in that stretch</li>
        <li data-kind="event-finding"><svg width="16" height="16"><path class="finding sev-error" d="M2,2 L14,2 L8,12 Z"/></svg> a finding about the event below it</li>
        <li data-kind="unread-event"><svg width="16" height="16"><path class="finding unread sev-error" d="M3,3 L13,13 M3,13 L13,3"/></svg> an event file that could not be read whole (unreadable, empty, parts missing), where its name places it</li>
        <li data-kind="gap"><svg width="16" height="16"><rect class="finding sev-error" x="1" y="3" width="14" height="10"/></svg> revisions of the store missing between two events</li>
        <li data-kind="dependency"><svg width="26" height="16"><line class="dependency" x1="2" y1="8" x2="24" y2="8"/></svg> dashed arrow: an event needs a missing revision of another store</li>
        <li data-kind="unregistered"><svg width="16" height="16"><circle class="finding sev-error" cx="8" cy="8" r="6"/></svg> by a lane's name: the store has events but no registration in stores/</li>
        <li data-kind="folder"><svg width="16" height="16"><rect class="finding sev-warning" x="2" y="2" width="12" height="12"/></svg> folder row: a finding about a file outside events/</li>
        <li class="severities">colour: <span class="swatch sev-error"></span> error <span class="swatch sev-warning"></span> warning <span class="swatch sev-info"></span> info; a dashed red outline: a time out of range; a black outline: selected</li>
        </ul></section>
        """

    /// Okabe-Ito colours (told apart with the common colour-vision deficiencies), shapes that
    /// differ by severity, and a print style without the controls.
    static let css = """
        body{font:14px system-ui,sans-serif;margin:16px;color:#111}h1{font-size:20px}h2{font-size:17px}h3{font-size:15px;margin:10px 0 4px}
        .plot{overflow:hidden;border:1px solid #ccc}svg.timeline{width:100%;height:auto;cursor:grab;user-select:none;display:block}
        .lane-bg{fill:#fff}.lane:nth-child(even) .lane-bg{fill:#f4f4f4}.lane-label,.folder-label,.axis text{font:12px ui-monospace,'DejaVu Sans Mono',monospace;fill:#333}
        .lane-note{font:italic 10px system-ui,sans-serif;fill:#8a3c00}.tick{stroke:#666}.axis-title{fill:#666}
        .mark{stroke:#000;stroke-width:.5}.type-200{fill:#0072B2}.type-300{fill:#009E73}.type-0{fill:#fff;stroke:#000}.type-100,.baseline{fill:#CC79A7;fill-opacity:.6}.mark.device-only{fill-opacity:.15;stroke-width:1.5;stroke-dasharray:2 1.5}
        .bin{fill:#0072B2}.out-of-range{stroke:#D55E00;stroke-width:2;stroke-dasharray:2 1}.finding,tr[data-index]{cursor:pointer}.sev-error{fill:#D55E00;stroke:#D55E00}.sev-warning{fill:#E69F00;stroke:#E69F00}.sev-info{fill:#56B4E9;stroke:#56B4E9}
        rect.finding{fill-opacity:.35;stroke-width:2}path.unread{fill:none;stroke-width:3;stroke-linecap:round}g.finding line,line.dependency{stroke:#D55E00;stroke-dasharray:4 3;stroke-width:2}g.finding text{font-size:11px;stroke:none}
        .selected{stroke:#000 !important;stroke-width:3;stroke-dasharray:none}path.unread.selected{stroke-width:4}tr.selected td{background:#fff3c4}
        #detail{background:#fffbe6;border:1px solid #e0c060;padding:6px 10px;margin:6px 0}#detail h3{margin:2px 0 6px}
        #detail dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}#detail dt{color:#555}#detail dd{margin:0;overflow-wrap:anywhere}
        table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top;font-size:12px}
        .growth table{display:inline-table;margin:2px 12px 2px 0}.growth td{text-align:right}
        tr.sev-error td:first-child{border-left:4px solid #D55E00}tr.sev-warning td:first-child{border-left:4px solid #E69F00}tr.sev-info td:first-child{border-left:4px solid #56B4E9}
        .legend ul{list-style:none;padding:0;margin:4px 0;display:flex;flex-wrap:wrap;gap:2px 18px}.legend li{margin:2px 0;font-size:12px}.legend svg{vertical-align:middle}.hint{color:#666}
        .swatch{display:inline-block;width:10px;height:10px}.swatch.sev-error{background:#D55E00}.swatch.sev-warning{background:#E69F00}.swatch.sev-info{background:#56B4E9}
        @media print{.controls,#detail{display:none}svg.timeline{cursor:auto}}
        """

    /// Zoom and pan on the x axis, the time axis, the detail panel and selection; marks, findings
    /// and the axis are drawn again for the visible range (one mark per event while at most 4,000
    /// are visible, counts per bin above). No array of unbounded length is spread into a call
    /// (`Math.min.apply`), whose arguments live on the stack; a time a Date cannot show is drawn
    /// at the edge of the axis (Spec/timeline.md 2). Lane labels still too wide for their column
    /// in the browser's font are shortened further. The marks are read once from their columns
    /// into typed arrays (Spec/timeline.md 4); on the global count axis the marks in view are
    /// found by binary search, so a zoom step looks only at them.
    static let script = """
        (function(){
        var L=\(plotLeft),W=\(plotWidth),H=\(laneHeight),LIMIT=\(markLimit),BINS=\(bins),LANES=\(laneLimit),NS='http://www.w3.org/2000/svg';
        var EPOCH=978307200,MAXMS=8.64e15,useTime=false,panel=document.getElementById('detail');
        var DIGIT=new Int8Array(128);'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.split('').forEach(function(c,i){DIGIT[c.charCodeAt(0)]=i;});
        // A column of the embedded marks: base64 VLQ text (p: a number per mark, r: value and run
        // length pairs), or a JSON array of the values themselves (Spec/timeline.md 4).
        function column(c,n){var out=new Float64Array(n);if(typeof c!=='string'){for(var j=0;j<n;j++)out[j]=c[j];return {v:out,packed:false};}
          var p=1,k=0,runs=c.charAt(0)==='r';
          function next(){var d=DIGIT[c.charCodeAt(p++)],z=(d>>1)&15,m=16,neg=d&1;while(d&32){d=DIGIT[c.charCodeAt(p++)];z+=(d&31)*m;m*=32;}return neg?-z:z;}
          while(k<n&&p<c.length){var v=next(),r=runs?next():1;while(r-->0&&k<n)out[k++]=v;}
          return {v:out,packed:true};}
        function dated(t){var ms=(t+EPOCH)*1000;return isFinite(ms)&&Math.abs(ms)<=MAXMS;}
        function when(t){return dated(t)?new Date((t+EPOCH)*1000).toISOString():'out of range';}
        function ticks(a,b,n,whole){var s=b-a;if(!(s>0)||!isFinite(s))return [a];var raw=s/n,p=Math.pow(10,Math.floor(Math.log(raw)/Math.LN10)),st=10*p;
          [1,2,5,10].some(function(k){if(k*p>=raw){st=k*p;return true;}return false;});if(whole&&st<1)st=1;
          var r=[];for(var v=Math.ceil(a/st)*st;v<=b+st*1e-9&&r.length<40;v+=st)r.push(v);return r;}
        function kind(t){return t===200?'save':t===300?'merge':t===0?'incomplete':'other-event';}
        function dl(rows){return '<dl>'+rows.map(function(r){return '<dt>'+esc(r[0])+'</dt><dd>'+r[1]+'</dd>';}).join('')+'</dl>';}
        function shown(v){return esc(typeof v==='string'?v:JSON.stringify(v));}
        document.querySelectorAll('section.ensemble').forEach(function(section,sectionIndex){
          var svg=section.querySelector('svg.timeline'),marks=svg.querySelector('g.marks'),fnd=svg.querySelector('g.findings'),axis=svg.querySelector('g.axis');
          var T=+svg.getAttribute('data-top'),LR=+svg.getAttribute('data-label-right'),AY=+axis.getAttribute('data-y');
          svg.querySelectorAll('text.lane-label').forEach(function(t){var n=t.lastChild;if(!n||n.nodeType!==3)return;var s=n.nodeValue.replace(/\\u2026$/,'');
            while(s.length>1&&t.getBBox().x+t.getBBox().width>LR){s=s.slice(0,-1);n.nodeValue=s+'\\u2026';}});
          // The data is read when first needed (a zoom, a click, the time axis), not at load: the
          // drawing the page was written with needs none of it, so the page opens as fast at any size.
          // The marks, one typed array per field: global count, store (index into strings),
          // revision, time, type, inserts, updates, deletes, model version (0: none, else 1 + index).
          var data=null,lane,n,str,GC,ST,laneOf,RV,TM,TY,INS,UPD,DEL,MV,files,fileIndex,spans,only;
          function need(){if(data)return;data=JSON.parse(section.querySelector('script.timeline-data').textContent);var i,C=data.columns;
            lane=Object.create(null);data.lanes.forEach(function(s,i){if(!(s in lane))lane[s]=Math.min(i,LANES-1);});
            n=data.count;str=data.strings;
            var g=column(C.globalCount,n);GC=g.v;if(g.packed)for(i=1;i<n;i++)GC[i]+=GC[i-1];
            ST=column(C.store,n).v;laneOf=new Int32Array(str.length);str.forEach(function(s,j){laneOf[j]=lane[s]||0;});
            var rv=column(C.revision,n);RV=rv.v;if(rv.packed){var last=new Float64Array(str.length);for(i=0;i<n;i++){RV[i]+=last[ST[i]];last[ST[i]]=RV[i];}}
            var tm=column(C.time,n);TM=tm.v;if(tm.packed){var k=0;for(i=0;i<n;i++){k+=TM[i];TM[i]=k/data.timeUnit;}}
            data.times.forEach(function(p){TM[p[0]]=p[1];});
            TY=column(C.type,n).v;INS=column(C.inserts,n).v;UPD=column(C.updates,n).v;DEL=column(C.deletes,n).v;MV=column(C.modelVersion,n).v;
            files=new Map();fileIndex=new Map();data.files.forEach(function(p){files.set(p[0],p[1]);fileIndex.set(p[1],p[0]);});
            spans=new Map(data.spans);only=new Set(data.deviceOnly);}
          function store(i){return str[ST[i]];}
          function file(i){var f=files.get(i);return f!==undefined?f:'events/'+GC[i]+'_'+str[ST[i]]+'_'+RV[i]+'.cdeevent';}
          // The first mark at or after a global count, and the first after it (the marks are in order of global count).
          function lower(v){var a=0,b=n;while(a<b){var c=(a+b)>>>1;if(GC[c]<v)a=c+1;else b=c;}return a;}
          function upper(v){var a=0,b=n;while(a<b){var c=(a+b)>>>1;if(GC[c]<=v)a=c+1;else b=c;}return a;}
          function find(f){var i=fileIndex.get(f);if(i!==undefined)return i;var u=f.indexOf('_',7);if(f.lastIndexOf('events/',0)!==0||u<0)return undefined;
            var v=+f.slice(7,u);if(!isFinite(v))return undefined;for(var j=lower(v);j<n&&GC[j]===v;j++)if(file(j)===f)return j;return undefined;}
          function key(i){return useTime?(dated(TM[i])?TM[i]:null):GC[i];}
          var lo,hi,view;
          var places=[];fnd.querySelectorAll('[data-gc],[data-from]').forEach(function(f){['data-gc','data-from','data-to'].forEach(function(a){if(f.hasAttribute(a))places.push(+f.getAttribute(a));});});
          function range(){need();lo=Infinity;hi=-Infinity;for(var i=0;i<n;i++){var v=key(i);if(v===null)continue;if(v<lo)lo=v;if(v>hi)hi=v;}
            if(!useTime)places.forEach(function(v){if(v<lo)lo=v;if(v>hi)hi=v;});
            if(lo>hi){lo=0;hi=1;}if(!(hi-lo>0)||!isFinite(hi-lo))hi=lo+Math.max(1,Math.abs(lo)*1e-9);view=[lo,hi];}
          function x(v){return L+(v-view[0])/(view[1]-view[0])*W;}
          function inView(px){return px>=L-0.5&&px<=L+W+0.5;}
          function place(i){var v=key(i);return v===null?(TM[i]<0?L:L+W):x(v);}
          function y(s){return T+(lane[s]||0)*H+H/2;}
          function el(n,a){var e=document.createElementNS(NS,n);for(var k in a)e.setAttribute(k,a[k]);return e;}
          function add(e,i,out){var t=document.createElementNS(NS,'title');t.textContent=file(i)+(out?' (time out of range)':'');e.appendChild(t);marks.appendChild(e);}
          // On the time axis a place with no mark of its own takes the time of the last mark before it.
          function byGC(gc){if(!useTime)return gc;if(!n)return null;var i=lower(gc);if(!(i<n&&GC[i]===gc))i=Math.max(0,upper(gc)-1);return key(i);}
          function drawAxis(){axis.textContent='';axis.appendChild(el('text',{'class':'axis-title',x:8,y:AY+16})).textContent=useTime?'time (UTC)':'global count';
            ticks(view[0],view[1],useTime?5:10,!useTime).forEach(function(v){var tx=x(v);
              axis.appendChild(el('line',{'class':'tick',x1:tx,y1:AY,x2:tx,y2:AY+5}));
              var label=useTime?when(v).slice(0,19).replace('T',' '):String(Math.round(v));
              axis.appendChild(el('text',{'class':'tick-label',x:tx,y:AY+16,'text-anchor':tx>L+W-(useTime?70:30)?'end':'middle'})).textContent=label;});}
          function one(i){var s=store(i),out=key(i)===null?' out-of-range':'',dev=only.has(i),sp=spans.get(i);
            if(sp&&sp.length){var a=Infinity,b=-Infinity;sp.forEach(function(s){var r=lane[s]||0;if(r<a)a=r;if(r>b)b=r;});
              add(el('rect',{'class':'mark baseline'+(dev?' device-only':'')+out,'data-kind':dev?'device-only':'baseline','data-i':i,'data-store':s,x:place(i)-4,y:T+a*H+4,width:8,height:(b-a+1)*H-8}),i,out);}
            else add(el('circle',{'class':'mark type-'+TY[i]+(dev?' device-only':'')+out,'data-kind':dev?'device-only':kind(TY[i]),'data-i':i,'data-store':s,cx:place(i),cy:y(s),r:5}),i,out);}
          function draw(){need();
            marks.textContent='';
            // On the global count axis the marks in view are one stretch of the list; on the time axis every mark is looked at.
            var a=useTime?0:lower(view[0]),b=useTime?n:upper(view[1]),count=0,i,v;
            if(useTime){for(i=0;i<n;i++){v=key(i);if(v===null||(v>=view[0]&&v<=view[1]))count++;}}else count=b-a;
            if(count<=LIMIT){for(i=a;i<b;i++){v=key(i);if(v===null||(v>=view[0]&&v<=view[1]))one(i);}}
            else{var t=new Float64Array(LANES*BINS),most=1;for(i=a;i<b;i++){v=key(i);if(v!==null&&(v<view[0]||v>view[1]))continue;
                var bin=v===null?(TM[i]<0?0:BINS-1):Math.floor((v-view[0])/(view[1]-view[0])*(BINS-1)),c=laneOf[ST[i]]*BINS+bin;t[c]++;if(t[c]>most)most=t[c];}
              for(var c=0;c<t.length;c++)if(t[c]>0)marks.appendChild(el('rect',{'class':'bin','data-kind':'bin','data-count':t[c],x:L+(c%BINS)*W/BINS,y:T+Math.floor(c/BINS)*H+6,width:W/BINS,height:H-12,'fill-opacity':0.2+0.8*t[c]/most}));}
            fnd.querySelectorAll('.finding').forEach(function(f){
              var k=f.getAttribute('data-kind'),gc=f.hasAttribute('data-gc')?byGC(+f.getAttribute('data-gc')):null,cy=y(f.getAttribute('data-store')),hide=false;
              if(k==='event-finding'||k==='unread-event'||k==='dependency'){if(gc===null){hide=true;}else{var cx=x(gc);hide=!inView(cx);
                if(k==='event-finding'){var tx=cx+13*(+f.getAttribute('data-slot')||0);f.setAttribute('d','M'+(tx-6)+','+(cy-16)+' L'+(tx+6)+','+(cy-16)+' L'+tx+','+(cy-6)+' Z');}
                else if(k==='unread-event')f.setAttribute('d','M'+(cx-5)+','+(cy-5)+' L'+(cx+5)+','+(cy+5)+' M'+(cx-5)+','+(cy+5)+' L'+(cx+5)+','+(cy-5));
                else{var ln=f.querySelector('line'),tx=f.querySelector('text');ln.setAttribute('x1',cx);ln.setAttribute('x2',cx);
                  var end=cx>L+W-60;tx.setAttribute('x',end?cx-4:cx+4);tx.setAttribute('text-anchor',end?'end':'start');}}}
              if(k==='gap'){var a=byGC(+f.getAttribute('data-from')),b=byGC(+f.getAttribute('data-to'));if(a===null||b===null){hide=true;}else{
                var l=Math.max(L,Math.min(x(a),x(b))+6),r=Math.min(L+W,Math.max(x(a),x(b))-6);hide=r<L||l>L+W;f.setAttribute('x',l);f.setAttribute('width',Math.max(4,r-l));}}
              if(hide)f.setAttribute('visibility','hidden');else f.removeAttribute('visibility');
            });
            drawAxis();
            if(selected)mark(selected);
          }
          function show(v){if(isFinite(v[0])&&isFinite(v[1])&&v[1]-v[0]>0&&isFinite(v[1]-v[0])){view=v;draw();}}
          // Selection: a finding with the marks of its files and its table row, or an event with its findings.
          var selected=null;
          function mark(s){need();document.querySelectorAll('.selected').forEach(function(e){e.classList.remove('selected');});
            var named=[],indexes=[];
            if(s.finding!==undefined){indexes=[s.finding];named=data.findings[s.finding][2];}
            else{named=[file(s.mark)];data.findings.forEach(function(f,i){if(f[2].indexOf(named[0])>=0)indexes.push(i);});}
            indexes.forEach(function(i){section.querySelectorAll('[data-index="'+i+'"]').forEach(function(e){e.classList.add('selected');});});
            named.forEach(function(f){var i=find(f);if(i!==undefined)marks.querySelectorAll('[data-i="'+i+'"]').forEach(function(e){e.classList.add('selected');});});}
          function detail(s){need();var h='';
            if(s.mark!==undefined){var i=s.mark,f=file(i);
              h='<h3>'+esc(f)+'</h3>'+dl([['store',esc(store(i))],['revision',RV[i]],['global count',GC[i]],['time',TM[i]+' ('+when(TM[i])+')'],['type',TY[i]+' ('+kind(TY[i])+')'+(only.has(i)?', only on the device':'')],
                ['changes','inserts '+INS[i]+', updates '+UPD[i]+', deletes '+DEL[i]],['model version',esc(MV[i]===0?'none':str[MV[i]-1])],
                ['findings',data.findings.filter(function(d){return d[2].indexOf(f)>=0;}).map(function(d){return esc(d[0])+': '+esc(d[3]);}).join('<br>')||'none']]);}
            else{var f=data.findings[s.finding],rows=[['severity',esc(f[1])],['number',f[5]===null||f[5]===undefined?'':f[5]],['files',f[2].map(esc).join('<br>')],['reason',esc(f[3])],['consequence',esc(f[6]||'')]];
              Object.keys(f[4]).forEach(function(k){rows.push([k,shown(f[4][k])]);});h='<h3>'+esc(f[0])+'</h3>'+dl(rows);}
            section.querySelector('.plot').after(panel);panel.innerHTML=h;panel.setAttribute('data-shown',s.mark!==undefined?'mark':'finding');}
          function choose(s){selected=s;mark(s);detail(s);}
          section.querySelectorAll('table.findings-table tr[data-index]').forEach(function(row){row.addEventListener('click',function(){
            choose({finding:+row.getAttribute('data-index')});var plot=section.querySelector('.plot');plot.scrollIntoView({block:'start'});panel.scrollIntoView({block:'nearest'});});});
          // The view the page was written with, without reading the data.
          var low=+svg.getAttribute('data-low'),high=+svg.getAttribute('data-high');if(high-low>0&&isFinite(high-low))view=[low,high];else range();
          if(sectionIndex===0)section.querySelector('.plot').after(panel);
          var drag=null;
          svg.addEventListener('wheel',function(e){e.preventDefault();var r=svg.getBoundingClientRect(),f=(e.clientX-r.left)/r.width*(L+W+40);
            var c=view[0]+(f-L)/W*(view[1]-view[0]),z=e.deltaY<0?0.8:1.25;show([c-(c-view[0])*z,c+(view[1]-c)*z]);},{passive:false});
          svg.addEventListener('mousedown',function(e){drag={x:e.clientX,v:view.slice()};});
          window.addEventListener('mouseup',function(){drag=null;});
          window.addEventListener('mousemove',function(e){if(!drag)return;var r=svg.getBoundingClientRect(),dv=(e.clientX-drag.x)/r.width*(L+W+40)/W*(drag.v[1]-drag.v[0]);show([drag.v[0]-dv,drag.v[1]-dv]);});
          svg.addEventListener('click',function(e){var t=e.target.closest('[data-i],[data-index]');if(!t)return;
            choose(t.hasAttribute('data-i')?{mark:+t.getAttribute('data-i')}:{finding:+t.getAttribute('data-index')});});
          section.redraw=function(){range();draw();};
        });
        function esc(s){return String(s).replace(/[&<>"']/g,function(c){return {'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'}[c];});}
        document.getElementById('axis').addEventListener('click',function(){useTime=!useTime;this.textContent=useTime?'x: time (switch to global count)':'x: global count (switch to time)';
          document.querySelectorAll('section.ensemble').forEach(function(s){s.redraw();});});
        document.getElementById('reset').addEventListener('click',function(){document.querySelectorAll('section.ensemble').forEach(function(s){s.redraw();});});
        document.documentElement.setAttribute('data-script','ready');
        })();
        """
}
