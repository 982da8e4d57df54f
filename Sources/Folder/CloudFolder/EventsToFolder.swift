import EnsembleModel
import Foundation
import JSONDocument

extension Converter {
    /// One event to write, and where it came from (for errors).
    package struct SourcedDeviceEvent: Sendable {
        package var event: Event
        package var source: String
        package var pointer: JSONPointer?

        package init(event: Event, source: String, pointer: JSONPointer?) {
            self.event = event
            self.source = source
            self.pointer = pointer
        }
    }

    /// Writes events held outside a cloud folder (a device's event store, Spec/device-state.md 7)
    /// as the new cloud folder `destination/<ensemble>/`: each event under its cloud name
    /// (cloud-layout.md 4), a registration `stores/<store>` for each of `registrations`, and the
    /// data files `dataFiles` (name, path of the file to copy). Everything is written into a
    /// staging folder beside `destination`, read back and compared, then renamed into place
    /// without replacing anything; on any error nothing is left at `destination`.
    package func writeEnsemble(
        _ ensemble: String, events: [SourcedDeviceEvent], registrations: [(store: String, leechDate: Date)], dataFiles: [(name: String, path: String)],
        destination: String, source: String
    ) throws(ConversionFailure) -> ConversionSummary {
        let destinationURL = URL(fileURLWithPath: destination).standardizedFileURL
        try Self.checkDestination(destination, replacing: false, existsCode: .convertDestinationExists)
        try Self.checkOutside(destination, source: source, code: .fileDestinationInsideSource)
        var staging = try StagingArea(for: destinationURL)
        defer { staging.discard() }
        let root = staging.url.appendingPathComponent(ensemble)
        for folder in [EnsembleSubfolder.stores, .events, .baselines, .data] {
            try StagingArea.createFolder(root.appendingPathComponent(folder.rawValue))
        }
        var writer = FolderWriter(root: root, target: .v2, binary: binary, reader: reader)
        writer.blobContainers = blobContainers
        var summary = ConversionSummary()
        for registration in registrations {
            let plist: [String: Any] = ["storeIdentifier": registration.store, "leechDate": registration.leechDate]
            let bytes: Data
            do {
                bytes = try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
            } catch {
                throw ConversionFailure(errors: [
                    FormatError(.convertWriteFailed, "could not write a registration: \(error.localizedDescription)", location: .init(file: destination))
                ])
            }
            try StagingArea.write([UInt8](bytes), to: root.appendingPathComponent("stores/" + registration.store))
        }
        for file in dataFiles {
            _ = try writer.copyDataFile(FileReference(URL(fileURLWithPath: file.path)), name: file.name, source: file.path)
        }
        for item in events {
            let event = item.event
            let kind: FolderWriter.Kind =
                event.type == .baseline
                ? .baseline(
                    BaselineFileName(
                        globalCount: event.globalCount, uniqueIdentifier: event.uniqueIdentifier, storePrefix: String(event.storeIdentifier.prefix(8)),
                        part: nil))
                : .event(EventFileName(globalCount: event.globalCount, storeIdentifier: event.storeIdentifier, revision: event.revision, part: nil))
            try writer.write(event, kind: kind, source: item.source, sourcePointer: item.pointer)
            summary.files.append(.init(source: item.source, destination: Self.join(destination, ensemble + "/" + writer.lastWritten), events: 1))
        }
        try writer.verify()
        summary.movedToDataFiles += writer.movedValues
        try staging.commit()
        return summary
    }
}
