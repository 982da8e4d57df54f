import JSONDocument

/// An event and the file it came from (for reports).
package struct SourcedEvent: Sendable {
    /// The event; without its object changes when ``isSummary`` is true.
    package var event: Event
    package var file: String
    /// The files of a multipart event, by part index; empty for a single file.
    package var parts: [String]
    /// The data files the event refers to (kept when the object changes are dropped).
    package var dataFileReferences: [String]
    /// How many object changes of each type the event holds (kept when they are dropped).
    package var changeCounts = ChangeCounts()

    package struct ChangeCounts: Sendable, Hashable {
        package var inserts = 0, updates = 0, deletes = 0
        package var total: Int { inserts + updates + deletes }

        package init() {}

        /// The counts of `changes` by type.
        package init(_ changes: [ObjectChange]) {
            for index in changes.indices { count(changes[index].type) }
        }

        mutating func count(_ type: ChangeType) {
            switch type {
            case .insert: inserts += 1
            case .update: updates += 1
            case .delete: deletes += 1
            }
        }
    }
    /// The object changes were dropped to save memory; ``MergeInput/loadBody`` reads them again.
    package private(set) var isSummary = false
    /// A fingerprint of the bytes the event was read from, so that reading them again can tell
    /// whether they are still the bytes that were checked.
    package var contentDigest: UInt64?

    package init(event: Event, file: String, parts: [String] = []) {
        self.event = event
        self.file = file
        self.parts = parts
        var referenced: [String] = []
        let changes = event.objectChanges
        // By index, reading fields in place: copying each change retains all its parts.
        for index in changes.indices {
            changeCounts.count(changes[index].type)
            Self.appendDataFiles(of: changes, at: index, to: &referenced)
        }
        dataFileReferences = sortedUnique(referenced)
    }

    /// The data files `changes` refer to (as ``dataFileReferences``), sorted, each once.
    package static func dataFileReferences(of changes: [ObjectChange]) -> [String] {
        var referenced: [String] = []
        for index in changes.indices { appendDataFiles(of: changes, at: index, to: &referenced) }
        return sortedUnique(referenced)
    }

    private static func appendDataFiles(of changes: [ObjectChange], at index: Int, to referenced: inout [String]) {
        // Most changes name no data file; appending an empty list still made a new buffer.
        if !changes[index].dataFiles.isEmpty { referenced += changes[index].dataFiles }
        for property in changes[index].propertyChanges.indices {
            if case .attributeInDataFile(let name) = changes[index].propertyChanges[property].value { referenced.append(name) }
        }
    }

    /// The summary of an event whose object changes are given in numbered form only (`event`
    /// holds none): the same counts and data file references as ``init(event:file:parts:)``
    /// then ``summary()`` give, without making the changes.
    package init(header event: Event, changes: NumberedEvent, file: String, parts: [String] = []) {
        self.event = event
        self.event.objectChanges = []
        self.file = file
        self.parts = parts
        for change in changes.changes { changeCounts.count(change.type) }
        var referenced = changes.dataFiles
        for property in changes.properties where property.kind == .dataFile { referenced.append(property.value) }
        dataFileReferences = sortedUnique(referenced.map(changes.string))
        isSummary = true
    }

    /// A summary read back from an event index (the merge engine's `EventStore`).
    package init(summary event: Event, file: String, parts: [String], dataFileReferences: [String], changeCounts: ChangeCounts, contentDigest: UInt64?) {
        self.event = event
        self.file = file
        self.parts = parts
        self.dataFileReferences = dataFileReferences
        self.changeCounts = changeCounts
        self.contentDigest = contentDigest
        isSummary = true
    }

    /// The same event without its object changes: what the analysis needs, in little memory.
    package func summary() -> SourcedEvent {
        var summary = self
        summary.event.objectChanges = []
        summary.isSummary = true
        return summary
    }
}
