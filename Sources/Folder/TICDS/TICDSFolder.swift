import CloudFolder
import CoreDataStore
import DataModel
import FileWrappers
import Foundation
import JSONDocument
import KeyedArchive

extension FormatError.Code {
    /// The path is neither a TICoreDataSync application folder nor one of its document folders
    /// (Spec/ticds.md 2.1).
    public static let ticdsNotTICDSFolder = Self("ticds.not-ticds-folder")
    /// `Encryption/salt.ticdsync` is not 16 bytes: no key can be derived (Spec/ticds.md 5.1).
    public static let ticdsInvalidSalt = Self("ticds.invalid-salt")
    /// A property list of the folder (deviceInfo, documentInfo, recentsync, a deleted
    /// document's or client's copy) is not a property-list dictionary (Spec/ticds.md 3).
    public static let ticdsInvalidPlist = Self("ticds.invalid-plist")
    /// A WholeStore that is, once decrypted and unzipped, no SQLite database (Spec/ticds.md 3.8).
    public static let ticdsInvalidWholeStore = Self("ticds.invalid-whole-store")
    /// A file larger than the limit of its kind (Spec/ticds.md 2.2): not read.
    public static let ticdsTooLarge = Self("ticds.too-large")
    /// The file of `--dates` is not a JSON object of paths to finite numbers (Spec/ticds.md 6.5).
    public static let ticdsInvalidDates = Self("ticds.invalid-dates")
}

/// A file of the folder: its path relative to the application folder, size and modification
/// time (seconds since 1970).
package struct TICDSFile: Sendable, Hashable {
    package var path: String
    package var size: Int64
    package var modified: Double
}

/// How the password of an encrypted folder fared (Spec/ticds.md 5.4).
package enum TICDSPasswordOutcome: String, Sendable, Hashable {
    /// No `Encryption/salt.ticdsync`: nothing is encrypted.
    case notEncrypted = "not-encrypted"
    /// Encrypted, and no password given.
    case notGiven = "not-given"
    /// It opens `test.ticdsync`.
    case right
    /// It does not open `test.ticdsync`: no encrypted file is read.
    case wrong
    /// `test.ticdsync` is missing or damaged, or the salt is: each file decides for itself.
    case unchecked
}

/// A client of the application: a folder of `ClientDevices/`.
package struct TICDSClient: Sendable, Hashable {
    package var identifier: String
    package var deviceInfo: String?
    package var description: String?
}

/// One sync change set file.
package struct TICDSChangeSet: Sendable, Hashable {
    package var client: String
    /// The file name without `.syncchg`.
    package var identifier: String
    package var file: TICDSFile
    /// Nil when the file could not be read (see `error`).
    package var form: ChangeSetForm?
    /// The changes of a set in SQLite form; nil otherwise.
    package var changes: [TICDSChange]?
    package var error: FormatError?
}

/// One client's WholeStore upload with its AppliedSyncChangeSets.
package struct TICDSWholeStore: Sendable, Hashable {
    package var client: String
    package var file: TICDSFile?
    /// `encrypted`, `zip`, outermost first.
    package var layers: [String]
    package var store: CoreDataStoreMetadata?
    package var storeError: FormatError?
    package var appliedFile: TICDSFile?
    package var applied: [TICDSAppliedSet]?
    package var appliedError: FormatError?
}

/// One client's `RecentSyncs/<client>.recentsync`.
package struct TICDSRecentSync: Sendable, Hashable {
    package var client: String
    package var file: TICDSFile
    /// `kTICDSLastSyncDate`, seconds since 2001; nil when absent or unreadable.
    package var lastSyncDate: Double?
}

/// One document folder, `Documents/<identifier>/`.
package struct TICDSDocument: Sendable, Hashable {
    package var identifier: String
    package var path: String
    package var infoFile: String?
    package var description: String?
    /// The names of the files of `IntegrityKey/` in byte order, those shorter than five
    /// characters left out as the framework leaves them out; nil when the folder is missing.
    package var integrityKeys: [String]?
    /// The folders of `SyncChanges/`: the clients the framework syncs with.
    package var syncClients: [String]
    /// By client, then identifier.
    package var sets: [TICDSChangeSet]
    /// Files of `SyncChanges/<client>/` that are no `.syncchg` file.
    package var otherSyncFiles: [TICDSFile]
    package var wholeStores: [TICDSWholeStore]
    package var recentSyncs: [TICDSRecentSync]
    package var temporaryFiles: [TICDSFile]
    /// `DeletedClients/<client>.plist`.
    package var deletedClients: [String]
}

/// A TICoreDataSync application folder as read (Spec/ticds.md 2, 3): nothing is written into it,
/// every file is opened from the folder's descriptor one name at a time without following a
/// link, and every read is bounded.
package struct TICDSFolder: Sendable {
    package static let maximumPlistBytes = 16 * 1024 * 1024
    package static let maximumSetBytes = 256 * 1024 * 1024
    package static let maximumStoreBytes = 1024 * 1024 * 1024

    /// The application folder's path as given (or found above a document folder).
    package var path: String
    /// The application folder's name.
    package var appIdentifier: String
    /// When a document folder was given: its identifier (only it is read).
    package var onlyDocument: String?
    package var salt: [UInt8]?
    package var password: TICDSPasswordOutcome
    /// The string `test.ticdsync` holds, once decrypted.
    package var testString: String?
    package var clients: [TICDSClient]
    /// `Information/DeletedDocuments/<id>.plist` identifiers.
    package var deletedDocuments: [String]
    /// `Information/DeletedClients/` identifiers.
    package var deletedClients: [String]
    package var documents: [TICDSDocument]
    /// Every file that could not be read, with its path (relative to the application folder)
    /// as the error's file; sets' errors are here too.
    package var errors: [FormatError]
    /// Encrypted files left unread because no key could be had (no password, a wrong one, a
    /// damaged salt): relative paths, in reading order.
    package var undecrypted: [String] = []

    /// Whether `path` is an application folder: it holds `Documents/` and `ClientDevices/` or
    /// `Information/` (Spec/ticds.md 2.1).
    package static func isApplicationFolder(_ path: String) -> Bool {
        isFolder(path + "/Documents") && (isFolder(path + "/ClientDevices") || isFolder(path + "/Information"))
    }

    /// Whether `path` is a document folder: it holds `SyncChanges/` and `documentInfo.plist`,
    /// `WholeStore/` or `IntegrityKey/`.
    package static func isDocumentFolder(_ path: String) -> Bool {
        isFolder(path + "/SyncChanges")
            && (isRegular(path + "/documentInfo.plist") || isFolder(path + "/WholeStore") || isFolder(path + "/IntegrityKey"))
    }

    /// The members of a property-list dictionary of the folder (deviceInfo, documentInfo,
    /// recentsync; Spec/ticds.md 3), bounded in size and depth; anything else is
    /// `ticds.invalid-plist`.
    package static func dictionary(_ bytes: [UInt8]) throws(FormatError) -> [ExactString: PropertyListValue] {
        let value: PropertyListValue
        do {
            value = try PropertyListValue.read(bytes, maximumBytes: maximumPlistBytes, maximumDepth: 64)
        } catch {
            throw FormatError(.ticdsInvalidPlist, "not a property list: \(error.message)", location: error.location)
        }
        guard case .dictionary(let members) = value else { throw FormatError(.ticdsInvalidPlist, "a property list, but not a dictionary") }
        return members
    }

    /// The integrity keys among the names of `IntegrityKey/`, in byte order: hidden names and
    /// those shorter than five UTF-16 code units left out, as the framework leaves them out
    /// (`NSString`'s length; Spec/ticds.md 3).
    package static func integrityKeys(_ names: [String]) -> [String] {
        names.filter { !$0.utf8.starts(with: [UInt8(ascii: ".")]) && $0.utf16.count >= 5 }
    }

    /// Whether `inspect` and `verify` read `path` as a TICoreDataSync folder.
    package static func looksLikeTICDS(_ path: String) -> Bool { isApplicationFolder(trimmed(path)) || isDocumentFolder(trimmed(path)) }

    static func trimmed(_ path: String) -> String { path.utf8.count > 1 ? ExactString.stem(of: path, before: "/") ?? path : path }

    static func isFolder(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    static func isRegular(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
    }

    /// Reads the application folder `path`, or the document folder `path` within its
    /// application folder (or alone, when it is in none).
    /// `dates` replaces the modification times of the files it names (paths relative to the
    /// application folder, seconds since 1970), for a folder copied without them (Spec/ticds.md 6.5).
    package static func read(_ given: String, password source: PasswordSource?, dates: [ExactString: Double] = [:]) throws(FormatError) -> TICDSFolder {
        let path = trimmed(given)
        var root = path
        var only: String?
        if !isApplicationFolder(path) {
            guard isDocumentFolder(path) else {
                throw FormatError(
                    .ticdsNotTICDSFolder, "neither a TICoreDataSync application folder (Documents/, ClientDevices/) nor a document folder (SyncChanges/)",
                    location: .init(file: given))
            }
            let url = URL(fileURLWithPath: path)
            only = url.lastPathComponent
            let above = url.deletingLastPathComponent().deletingLastPathComponent().path
            root = isApplicationFolder(above) ? above : path
        }
        var reader = Reader(handle: try DirectoryHandle.open(root), rootPath: root)
        reader.dates = dates
        if only != nil && root == path {
            // A document folder in no application folder: read alone, without encryption facts.
            var folder = TICDSFolder(
                path: root, appIdentifier: "", onlyDocument: only, salt: nil, password: .notEncrypted, testString: nil, clients: [], deletedDocuments: [],
                deletedClients: [], documents: [], errors: [])
            if let only { folder.documents = [reader.document(only, relative: "", syncKey: nil)] }
            folder.errors = reader.errors
            folder.undecrypted = reader.undecrypted
            return folder
        }
        return reader.application(only: only, password: source)
    }
}

/// The reading of one folder: its handle, the errors met, the sync key once known.
struct Reader {
    let handle: DirectoryHandle
    let rootPath: String
    var errors: [FormatError] = []
    /// Whether encrypted files are to be decrypted (a salt is present).
    var encrypted = false
    /// Nil while encrypted files cannot be read: no password, a wrong one, no usable salt.
    var syncKey: [UInt8]?
    var undecrypted: [String] = []
    /// Modification times given instead of the file system's.
    var dates: [ExactString: Double] = [:]

    init(handle: DirectoryHandle, rootPath: String) {
        self.handle = handle
        self.rootPath = rootPath
    }

    mutating func fail(_ error: FormatError, _ relative: String) {
        var located = error
        located.location.file = relative
        errors.append(located)
    }

    /// The entries of the folder `relative` ("" for the root); empty when it is missing.
    func entries(_ relative: String) -> [FolderEntry] {
        let folder = relative.isEmpty ? handle : ExactString.components(of: relative, omittingEmpty: true).reduce(Optional(handle)) { $0?.folder($1) }
        return (try? folder?.listedEntries(displayPath: join(rootPath, relative))) ?? []
    }

    func folderExists(_ relative: String) -> Bool {
        ExactString.components(of: relative, omittingEmpty: true).reduce(Optional(handle)) { $0?.folder($1) } != nil
    }

    func join(_ a: String, _ b: String) -> String { a.isEmpty ? b : b.isEmpty ? a : a + "/" + b }

    /// Hidden names start with the byte `.` (`hasPrefix` compares characters, and `.` followed by
    /// a combining mark is another character).
    static func visible(_ entry: FolderEntry) -> Bool { entry.name.text != nil && entry.name.bytes.first != UInt8(ascii: ".") }

    /// The bytes of a regular file, at most `limit`.
    mutating func bytes(_ relative: String, limit: Int) -> [UInt8]? {
        do {
            return try EventFileReader.readBytes(handle.file(relative, shownAs: join(rootPath, relative)), limit: limit)
        } catch  where error.code == .jsonTooLarge || error.code == .binaryTooLarge {
            // The event reader names the limit after its own formats; here it is the folder's.
            fail(FormatError(.ticdsTooLarge, "the file is larger than the limit of \(limit) bytes for its kind", location: error.location), relative)
            return nil
        } catch {
            fail(error, relative)
            return nil
        }
    }

    /// The plain bytes of a file the framework encrypts when the folder is encrypted.
    mutating func plainBytes(_ relative: String, limit: Int) -> (bytes: [UInt8], encrypted: Bool)? {
        guard let bytes = bytes(relative, limit: limit) else { return nil }
        guard encrypted else { return (bytes, false) }
        guard let key = syncKey else {
            undecrypted.append(relative)
            return nil
        }
        do {
            return (try FZACryptor.decrypt(bytes, key: key), true)
        } catch {
            fail(error, relative)
            return nil
        }
    }

    /// A property-list dictionary; `encryptable` files are decrypted first in an encrypted folder.
    mutating func dictionary(_ relative: String, encryptable: Bool) -> [ExactString: PropertyListValue]? {
        let read = encryptable ? plainBytes(relative, limit: TICDSFolder.maximumPlistBytes)?.bytes : bytes(relative, limit: TICDSFolder.maximumPlistBytes)
        guard let read else { return nil }
        do {
            return try TICDSFolder.dictionary(read)
        } catch {
            fail(error, relative)
            return nil
        }
    }

    func file(_ relative: String, _ entry: FolderEntry) -> TICDSFile {
        TICDSFile(path: relative, size: entry.size, modified: dates[relative] ?? entry.modified)
    }

    static func string(_ value: PropertyListValue?) -> String? {
        if case .string(let text)? = value { return text }
        return nil
    }

    /// The key and password check (Spec/ticds.md 5.4).
    mutating func unlock(_ source: PasswordSource?) -> (salt: [UInt8]?, outcome: TICDSPasswordOutcome, test: String?) {
        let saltPath = "Encryption/salt.ticdsync", testPath = "Encryption/test.ticdsync"
        guard entries("Encryption").contains(where: { $0.name.text == "salt.ticdsync" }) else { return (nil, .notEncrypted, nil) }
        encrypted = true
        guard let salt = bytes(saltPath, limit: 4096) else {
            return (nil, .unchecked, nil)
        }
        guard salt.count == FZACryptor.saltLength else {
            fail(FormatError(.ticdsInvalidSalt, "the salt has \(salt.count) bytes, not 16", location: .init(offset: salt.count)), saltPath)
            return (salt, .unchecked, nil)
        }
        guard let credentials = source?.credentials(), let key = FZACryptor.syncKey(credentials, salt: salt) else {
            return (salt, .notGiven, nil)
        }
        let test = entries("Encryption").first { $0.name.text == "test.ticdsync" && $0.isRegularFile }
        guard test != nil, let testBytes = bytes(testPath, limit: TICDSFolder.maximumPlistBytes) else {
            syncKey = key
            return (salt, .unchecked, nil)
        }
        guard let opens = FZACryptor.authenticates(testBytes, key: key) else {
            // Too short to carry an HMAC: the password cannot be checked, and the file is damaged.
            do {
                _ = try FZACryptor.decrypt(testBytes, key: key)
            } catch {
                fail(error, testPath)
            }
            syncKey = key
            return (salt, .unchecked, nil)
        }

        guard opens else {
            fail(
                FormatError(
                    .ticdsWrongPassword, "the password does not open test.ticdsync (its HMAC does not match): no encrypted file is read",
                    location: .init(offset: testBytes.count - 32)), testPath)
            return (salt, .wrong, nil)
        }
        syncKey = key
        var text: String?
        if let plain = try? FZACryptor.decrypt(testBytes, key: key), let archive = try? KeyedArchiveReader(classes: .foundation).read(plain) {
            text = archive.root.flatMap { if case .string(let value) = $0 { value } else { nil } }
        }
        return (salt, .right, text)
    }

    mutating func application(only: String?, password source: PasswordSource?) -> TICDSFolder {
        let (salt, outcome, test) = unlock(source)
        var clients: [TICDSClient] = []
        for entry in entries("ClientDevices") where entry.isDirectory && Self.visible(entry) {
            guard let name = entry.name.text else { continue }
            let infoPath = "ClientDevices/\(name)/deviceInfo.plist"
            var client = TICDSClient(identifier: name, deviceInfo: nil, description: nil)
            if entries("ClientDevices/\(name)").contains(where: { $0.name.text == "deviceInfo.plist" }) {
                client.deviceInfo = infoPath
                client.description = dictionary(infoPath, encryptable: true).flatMap { Self.string($0["kTICDSClientDeviceDescription"]) }
            }
            clients.append(client)
        }
        func identifiers(_ relative: String, suffix: String?) -> [String] {
            entries(relative).filter(Self.visible).compactMap { entry in
                guard let name = entry.name.text else { return nil }
                guard let suffix else { return name }
                return ExactString.stem(of: name, before: suffix)
            }
        }
        var documents: [TICDSDocument] = []
        for entry in entries("Documents") where entry.isDirectory && Self.visible(entry) {
            guard let name = entry.name.text, only.map({ ExactString($0) == ExactString(name) }) ?? true else { continue }
            documents.append(document(name, relative: "Documents/" + name, syncKey: syncKey))
        }
        return TICDSFolder(
            path: rootPath, appIdentifier: URL(fileURLWithPath: rootPath).lastPathComponent, onlyDocument: only, salt: salt, password: outcome,
            testString: test, clients: clients, deletedDocuments: identifiers("Information/DeletedDocuments", suffix: ".plist"),
            deletedClients: identifiers("Information/DeletedClients", suffix: nil), documents: documents, errors: errors, undecrypted: undecrypted)
    }

    mutating func document(_ identifier: String, relative base: String, syncKey: [UInt8]?) -> TICDSDocument {
        func at(_ name: String) -> String { join(base, name) }
        var document = TICDSDocument(
            identifier: identifier, path: base.isEmpty ? "." : base, infoFile: nil, description: nil, integrityKeys: nil, syncClients: [], sets: [],
            otherSyncFiles: [], wholeStores: [], recentSyncs: [], temporaryFiles: [], deletedClients: [])
        let top = entries(base)
        if top.contains(where: { $0.name.text == "documentInfo.plist" && $0.isRegularFile }) {
            document.infoFile = at("documentInfo.plist")
            document.description = dictionary(at("documentInfo.plist"), encryptable: true).flatMap { Self.string($0["kTICDSDocumentDescription"]) }
        }
        if folderExists(at("IntegrityKey")) {
            document.integrityKeys = TICDSFolder.integrityKeys(entries(at("IntegrityKey")).compactMap { $0.name.text })
        }
        for client in entries(at("SyncChanges")) where client.isDirectory && Self.visible(client) {
            guard let name = client.name.text else { continue }
            document.syncClients.append(name)
            let folder = at("SyncChanges/" + name)
            for entry in entries(folder) where Self.visible(entry) {
                guard let fileName = entry.name.text else { continue }
                let path = folder + "/" + fileName
                guard entry.isRegularFile, let identifier = ExactString.stem(of: fileName, before: ".syncchg") else {
                    document.otherSyncFiles.append(file(path, entry))
                    continue
                }
                document.sets.append(changeSet(client: name, identifier: identifier, file: file(path, entry)))
            }
        }
        for client in entries(at("WholeStore")) where client.isDirectory && Self.visible(client) {
            guard let name = client.name.text else { continue }
            document.wholeStores.append(wholeStore(client: name, folder: at("WholeStore/" + name)))
        }
        for entry in entries(at("RecentSyncs")) where entry.isRegularFile && Self.visible(entry) {
            guard let name = entry.name.text, let client = ExactString.stem(of: name, before: ".recentsync") else { continue }
            let path = at("RecentSyncs/" + name)
            var date: Double?
            if let plist = dictionary(path, encryptable: false), case .date(let value)? = plist["kTICDSLastSyncDate"] { date = value }
            document.recentSyncs.append(TICDSRecentSync(client: client, file: file(path, entry), lastSyncDate: date))
        }
        document.temporaryFiles = files(below: at("TemporaryFiles"), depth: 0)
        document.deletedClients = entries(at("DeletedClients")).filter(Self.visible).compactMap { $0.name.text }.map {
            ExactString.stem(of: $0, before: ".plist") ?? $0
        }
        return document
    }

    /// The regular files below `relative`, at most 8 folders deep and 10,000 files.
    func files(below relative: String, depth: Int) -> [TICDSFile] {
        var found: [TICDSFile] = []
        for entry in entries(relative) {
            guard let name = entry.name.text, found.count < 10_000 else { continue }
            if entry.isDirectory {
                if depth < 8 { found += files(below: relative + "/" + name, depth: depth + 1) }
            } else {
                found.append(file(relative + "/" + name, entry))
            }
        }
        return found
    }

    mutating func changeSet(client: String, identifier: String, file: TICDSFile) -> TICDSChangeSet {
        var set = TICDSChangeSet(client: client, identifier: identifier, file: file, form: nil, changes: nil, error: nil)
        let before = errors.count
        guard let plain = plainBytes(file.path, limit: TICDSFolder.maximumSetBytes)?.bytes else {
            set.error = errors.count > before ? errors.last : nil
            return set
        }
        set.form = ChangeSetForm.detect(plain)
        switch set.form {
        case .sqlite?:
            do {
                set.changes = try SyncChangeStore.changes(plain)
            } catch {
                set.error = error
                fail(error, file.path)
            }
        default:
            // Apple's binary store: classified, never decoded (Spec/ticds.md 4.2).
            let error = FormatError(
                .fileKindBinaryStore,
                "a change set in Apple's binary store form (\(plain.count) bytes, not SQLite): only Apple's Core Data reads it, the toolkit does not decode it",
                location: .init(offset: 0))
            set.error = error
            fail(error, file.path)
        }
        return set
    }

    mutating func wholeStore(client: String, folder: String) -> TICDSWholeStore {
        var whole = TICDSWholeStore(
            client: client, file: nil, layers: [], store: nil, storeError: nil, appliedFile: nil, applied: nil, appliedError: nil)
        let listed = entries(folder)
        if let entry = listed.first(where: { $0.name.text == "WholeStore.ticdsync" && $0.isRegularFile }) {
            let path = folder + "/WholeStore.ticdsync"
            whole.file = file(path, entry)
            let before = errors.count
            if let (plain, wasEncrypted) = plainBytes(path, limit: TICDSFolder.maximumStoreBytes) {
                if wasEncrypted { whole.layers.append("encrypted") }
                var content = plain
                do throws(FormatError) {
                    if ContentKind.detect(plain) == .zip {
                        whole.layers.append("zip")
                        content = try ZipArchive.readSingleEntry(plain, maximumBytes: TICDSFolder.maximumStoreBytes).content
                    }
                    guard content.starts(with: ChangeSetForm.sqliteMagic) else {
                        throw FormatError(
                            .ticdsInvalidWholeStore, "once unwrapped, not an SQLite database: \(firstBytesDescription(content))", location: .init(offset: 0))
                    }
                    whole.store = try SyncChangeStore.storeMetadata(content, shownAs: join(rootPath, path))
                } catch {
                    whole.storeError = error
                    fail(error, path)
                }
            } else if errors.count > before {
                whole.storeError = errors.last
            }
        }
        if let entry = listed.first(where: { $0.name.text == "AppliedSyncChangeSets.ticdsync" && $0.isRegularFile }) {
            let path = folder + "/AppliedSyncChangeSets.ticdsync"
            whole.appliedFile = file(path, entry)
            // Never encrypted (Spec/ticds.md 3.9).
            if let bytes = bytes(path, limit: TICDSFolder.maximumSetBytes) {
                do {
                    whole.applied = try SyncChangeStore.appliedSets(bytes)
                } catch {
                    whole.appliedError = error
                    fail(error, path)
                }
            }
        }
        return whole
    }
}

extension TICDSFolder {
    /// The largest `--dates` file read.
    package static let maximumDatesBytes = 16 * 1024 * 1024

    /// A `--dates` file (Spec/ticds.md 6.5): a JSON object from paths relative to the application
    /// folder to seconds since 1970.
    package static func readDates(_ path: String) throws(FormatError) -> [ExactString: Double] {
        let location = FormatError.Location(file: path)
        let value: JSONValue
        do {
            value = try JSONParser.parse(try EventFileReader.readBytes(FileReference(path: path), limit: maximumDatesBytes))
        } catch {
            throw FormatError(.ticdsInvalidDates, error.message, location: location)
        }
        guard let object = value.objectValue else { throw FormatError(.ticdsInvalidDates, "not a JSON object of paths to dates", location: location) }
        var dates: [ExactString: Double] = [:]
        for (key, date) in object.members {
            guard let seconds = date.numberValue?.doubleValue, seconds.isFinite else {
                throw FormatError(.ticdsInvalidDates, "the date of \(key) is not a finite number of seconds since 1970", location: location)
            }
            dates[key] = seconds
        }
        return dates
    }
}

extension TICDSFolder {
    /// The rows of `client`'s WholeStore of `document`, read with the app's `model` as an app's
    /// Core Data store is read (Spec/device-state.md 2.5): decrypted, unzipped, copied to a
    /// private file; nothing is written into the folder (Spec/ticds.md 10.2).
    package func wholeStoreContents(
        document: TICDSDocument, client: String, model: DataModel, password source: PasswordSource?
    ) throws(FormatError)
        -> CoreDataStoreContents
    {
        var reader = Reader(handle: try DirectoryHandle.open(path), rootPath: path)
        _ = reader.unlock(source)
        let relative = reader.join(document.path == "." ? "" : document.path, "WholeStore/\(client)/WholeStore.ticdsync")
        guard let plain = reader.plainBytes(relative, limit: TICDSFolder.maximumStoreBytes)?.bytes else {
            throw reader.errors.last
                ?? FormatError(.ticdsPasswordRequired, "the WholeStore is encrypted and no password opens it", location: .init(file: relative))
        }
        do throws(FormatError) {
            var content = plain
            if ContentKind.detect(plain) == .zip {
                content = try ZipArchive.readSingleEntry(plain, maximumBytes: TICDSFolder.maximumStoreBytes).content
            }
            guard content.starts(with: ChangeSetForm.sqliteMagic) else {
                throw FormatError(.ticdsInvalidWholeStore, "once unwrapped, not an SQLite database", location: .init(offset: 0))
            }
            return try SyncChangeStore.withPrivateCopy(content, code: .coreDataUnreadableStore) { copy throws(FormatError) in
                try CoreDataStoreContents.read(path: copy, model: model)
            }
        } catch {
            var located = error
            located.location.file = relative
            throw located
        }
    }
}
