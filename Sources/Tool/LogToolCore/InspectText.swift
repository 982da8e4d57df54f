import Foundation
import EnsemblesToolkit

/// Renders an inspect report (the JSON document) as text for people.
enum InspectText {
    static func render(_ report: JSONValue) -> String {
        var lines: [String] = []
        if report[JSONPointer(["kind"])] == .string("event") {
            renderFile(report, into: &lines)
        } else if report[JSONPointer(["kind"])] == .string("log") {
            let events = report[JSONPointer(["events"])]?.arrayValue ?? []
            lines.append("\(text(report[JSONPointer(["file"])])): \(text(report[JSONPointer(["encoding"])])) log of \(events.count) events, shown as v2 JSON")
            lines += events.map { json($0, layout: .pretty) }
            renderProblems(report[JSONPointer(["unreadable"])]?.arrayValue ?? [], into: &lines)
        } else {
            for ensemble in report[JSONPointer(["ensembles"])]?.arrayValue ?? [] {
                renderEnsemble(ensemble, into: &lines)
                lines.append("")
            }
            let summary = report[JSONPointer(["summary"])]
            let nouns = [
                ("ensembles", "ensemble", "ensembles"), ("stores", "store", "stores"), ("events", "event", "events"),
                ("baselines", "baseline", "baselines"), ("dataFiles", "data file", "data files"), ("debris", "debris", "debris"),
                ("unreadable", "unreadable", "unreadable"),
            ]
            let counts = nouns.map { key, one, many in
                let count = summary?[JSONPointer([key])]
                return "\(text(count)) \(count == JSONValue(Int64(1)) ? one : many)"
            }
            lines.append("Summary: " + counts.joined(separator: ", "))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func renderEnsemble(_ ensemble: JSONValue, into lines: inout [String]) {
        func field(_ value: JSONValue, _ key: String) -> JSONValue? { value[JSONPointer([key])] }
        func list(_ key: String) -> [JSONValue] { field(ensemble, key)?.arrayValue ?? [] }
        lines.append("Ensemble \(text(field(ensemble, "identifier"))) (\(text(field(ensemble, "path"))))")

        lines.append("  Stores (\(list("stores").count))")
        for store in list("stores") {
            var line = "    \(text(field(store, "identifier")))"
            line +=
                field(store, "registered") == .bool(true)
                ? "  registered, leeched \(text(field(store, "leechDate")))"
                : "  NOT REGISTERED in stores/"
            line += "  \(text(field(store, "events"))) events"
            if field(store, "firstRevision") != .null {
                line += ", revisions \(text(field(store, "firstRevision")))-\(text(field(store, "lastRevision")))"
            }
            let gaps = field(store, "gaps")?.arrayValue ?? []
            if !gaps.isEmpty {
                line +=
                    ", gaps "
                    + gaps.map { gap in
                        let first = text(field(gap, "first")), last = text(field(gap, "last"))
                        return first == last ? first : "\(first)-\(last)"
                    }.joined(separator: ", ")
            }
            lines.append(line)
        }

        lines.append("  Events (\(list("events").count))")
        lines.append("    " + ["global", "store", "rev", "type", "changes", "bytes", "file"].joined(separator: "\t"))
        for event in list("events") {
            var row = ["globalCount", "store", "revision", "type", "objectChanges", "bytes", "file"].map { text(field(event, $0)) }
            if let parts = field(event, "parts"), parts != .null {
                row[row.count - 1] +=
                    "  [parts \(text(field(parts, "present"))) of \(text(field(parts, "count")))"
                    + (field(parts, "complete") == .bool(true) ? "]" : ", INCOMPLETE]")
            }
            row[row.count - 1] += layersText(field(event, "layers"))
            lines.append("    " + row.joined(separator: "\t"))
        }

        lines.append("  Baselines (\(list("baselines").count))")
        for baseline in list("baselines") {
            var line = "    \(text(field(baseline, "file")))  global count \(text(field(baseline, "globalCount")))"
            if field(baseline, "legacyName") == .bool(true) { line += "  (legacy name)" }
            line += "  store \(text(field(baseline, "store")))  revisions \(text(field(baseline, "revisionSet")))"
            line += "  \(text(field(baseline, "objectChanges"))) objects"
            lines.append(line)
        }

        let data = field(ensemble, "dataFiles")
        lines.append("  Data files: \(text(data.flatMap { field($0, "count") })) (\(text(data.flatMap { field($0, "bytes") })) bytes)")

        lines.append("  Debris (\(list("debris").count))")
        for debris in list("debris") {
            lines.append("    \(text(field(debris, "path")))  [\(text(field(debris, "kind")))] \(text(field(debris, "reason")))")
        }
        if !list("duplicateFolders").isEmpty {
            lines.append("  Duplicate folders (\(list("duplicateFolders").count)), folded in as a device does")
            for duplicate in list("duplicateFolders") {
                let copied = field(duplicate, "copied")?.arrayValue?.count ?? 0
                lines.append("    \(text(field(duplicate, "path")))  \(copied) files only there, \(text(field(duplicate, "shared"))) also in the ensemble")
            }
        }
        renderProblems(list("unreadable"), into: &lines)
        if !list("unknownKeys").isEmpty {
            lines.append("  Unknown keys (\(list("unknownKeys").count)), kept on rewrite")
            for key in list("unknownKeys") {
                lines.append("    \(text(field(key, "file"))) \(text(field(key, "pointer")))")
            }
        }
    }

    private static func renderProblems(_ problems: [JSONValue], into lines: inout [String]) {
        lines.append("  Unreadable (\(problems.count))")
        for problem in problems {
            func field(_ key: String) -> JSONValue? { problem[JSONPointer([key])] }
            var place = text(field("file"))
            if let offset = field("offset"), offset != .null { place += " byte \(text(offset))" }
            if let pointer = field("pointer"), pointer != .null { place += " at \(text(pointer))" }
            lines.append("    \(place): \(text(field("message"))) [\(text(field("code")))]")
        }
    }

    private static func renderFile(_ report: JSONValue, into lines: inout [String]) {
        func field(_ key: String) -> JSONValue? { report[JSONPointer([key])] }
        var title = "\(text(field("file"))): \(text(field("encoding")))" + layersText(field("layers"))
        if let part = field("part"), part != .null {
            title += ", part \(text(part[JSONPointer(["index"])])) of \(text(part[JSONPointer(["count"])]))"
        }
        lines.append(title)
        if let event = field("event"), event != .null {
            lines.append(json(event, layout: .pretty))
        }
        renderProblems(field("unreadable")?.arrayValue ?? [], into: &lines)
        for key in field("unknownKeys")?.arrayValue ?? [] {
            lines.append("  unknown key \(text(key[JSONPointer(["pointer"])])) (kept on rewrite)")
        }
    }

    /// `  [encrypted+zip]` for a wrapped file (its layers, outermost first), nothing for a plain one.
    static func layersText(_ layers: JSONValue?) -> String {
        guard let names = layers?.arrayValue?.compactMap(\.stringValue), !names.isEmpty else { return "" }
        return "  [" + names.joined(separator: "+") + "]"
    }

    /// A value as plain text: strings without quotes, null as `-`, the rest as compact JSON;
    /// escaped for a terminal either way (Spec/README.md 4.1).
    static func text(_ value: JSONValue?) -> String {
        switch value {
        case nil, .null?: "-"
        case .string(let string)?: TerminalText.escape(string)
        case let other?: json(other)
        }
    }

    /// `value` as JSON text for people: JSON escapes C0 controls (line feeds and tabs in strings
    /// too) and backslashes itself; DEL, C1 and the line separators, which it writes as they are,
    /// are escaped by Spec/README.md 4.1. The line feeds of the pretty layout stay.
    static func json(_ value: JSONValue, layout: JSONWriter.Layout = .compact) -> String {
        TerminalText.escapeControls(JSONWriter(layout: layout).string(value), keepingLineBreaks: true)
    }
}
