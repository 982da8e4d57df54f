import Foundation
import JSONDocument

#if canImport(FoundationNetworking)
import FoundationNetworking
import FoundationXML
#endif

extension RemoteSnapshot {
    /// Every object under the prefix, by ListObjectsV2 pages followed through their continuation
    /// tokens (Spec/remote.md 11.4). One page at a time is held and parsed; only the entries
    /// stay. Unsafe keys are reported, not listed.
    func listS3(_ transport: HTTPTransport, report: inout Report) throws(FormatError) -> ([Entry], [FormatError]) {
        guard let folder = location.s3 else { return ([], []) }
        var files: [Entry] = []
        var problems: [FormatError] = []
        // A key is a file of the snapshot; the names above it are folders. One name cannot be
        // both (S3 holds `a` and `a/b` side by side; a file system does not).
        var filePaths: Set<String> = []
        var folderPaths: Set<String> = []
        var token: String?
        // Every token sent: a server that hands back an earlier one (A, B, A, ...) would list
        // the same pages for ever, each key again (Spec/remote.md 11.4).
        var tokensSent: Set<String> = []
        var pages = 0
        let dates = ISO8601DateFormatter()
        dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let wholeSeconds = ISO8601DateFormatter()
        repeat {
            var query = [("list-type", "2"), ("encoding-type", "url"), ("max-keys", String(options.s3PageSize))]
            if !folder.prefix.isEmpty { query.append(("prefix", folder.prefix)) }
            if let token { query.append(("continuation-token", token)) }
            let response = try transport.perform(
                .init(method: "GET", url: location.s3URL(key: nil, query: query), sink: .memory, limit: Self.maximumListingBytes), origin: location,
                file: ".")
            report.listingRequests += 1
            pages += 1
            guard response.status == 200 else {
                throw FormatError(.remoteHTTPStatus, "ListObjectsV2 answered \(response.status)\(s3Hint(response))", location: .init(file: "."))
            }
            // The reader's errors name no file; the listing's are reported against the folder.
            let page: ListBucketReader.Page
            do { page = try ListBucketReader.read(response.body, maximumKeys: Self.maximumMembersPerFolder) } catch { throw error.inFile(".") }
            for object in page.objects {
                // By bytes: keys are byte strings, and a key spelt in the other normalisation is outside.
                guard let relative = ExactString.remainder(of: object.key, after: folder.prefix) else {
                    problems.append(FormatError(.remoteUnsafeName, "a key outside the folder listed: \(object.key)", location: .init(file: ".")))
                    continue
                }
                // A key ending in `/` with no bytes is a console's folder marker, not a file.
                if relative.isEmpty || (relative.hasSuffix("/") && object.size == 0) { continue }
                let path = ExactString.components(of: relative)
                let shown = relative
                if let reason = path.lazy.compactMap({ Self.unsafeReason($0) }).first
                    ?? (path == [Self.manifestName] ? "the manifest's own name" : nil)
                    ?? (path.count > Self.maximumDepth ? "folders nested more than \(Self.maximumDepth) deep are not fetched" : nil)
                {
                    problems.append(FormatError(.remoteUnsafeName, "\(reason): not fetched", location: .init(file: shown)))
                    continue
                }
                let parents = (1..<path.count).map { path.prefix($0).joined(separator: "/") }
                if filePaths.contains(relative) {
                    problems.append(FormatError(.remoteUnsafeName, "a second key of this name: not fetched", location: .init(file: shown)))
                    continue
                }
                if folderPaths.contains(relative) || parents.contains(where: { filePaths.contains($0) }) {
                    problems.append(FormatError(.remoteUnsafeName, "a name that is both a file and a folder: not fetched", location: .init(file: shown)))
                    continue
                }
                filePaths.insert(relative)
                folderPaths.formUnion(parents)
                guard files.count < Self.maximumMembers else {
                    throw FormatError(
                        .remoteMalformedListing, "the folder holds more than \(Self.maximumMembers) keys, the limit of a listing", location: .init(file: "."))
                }
                let modified = object.lastModified.flatMap { dates.date(from: $0) ?? wholeSeconds.date(from: $0) }
                files.append(Entry(path: path, size: object.size, etag: object.etag, modified: modified))
            }
            if page.isTruncated {
                // A page that says more follows must say where: a token missing, or one sent
                // before, would list the same pages for ever.
                guard let next = page.nextToken, !next.isEmpty, !tokensSent.contains(next), pages < Self.maximumMembers else {
                    throw FormatError(.remoteMalformedListing, "a truncated ListObjectsV2 page without a new continuation token", location: .init(file: "."))
                }
                tokensSent.insert(next)
                token = next
            } else {
                token = nil
            }
        } while token != nil
        return (files, problems)
    }

    /// What an S3 error answer says (its XML `Code`), the region the bucket is in when that is
    /// why, and that no credentials were found when an unsigned request is refused.
    func s3Hint(_ response: HTTPTransport.Response) -> String {
        var parts: [String] = []
        if let code = S3ErrorReader.code(response.body) { parts.append(code) }
        if let region = response.headers["x-amz-bucket-region"], region != location.s3?.region {
            parts.append("the bucket is in \(region): --region \(region)")
        }
        if [401, 403].contains(response.status) && options.s3Credentials == nil {
            parts.append("no AWS credentials were found: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, ~/.aws/credentials")
        }
        if response.status == 404 && parts.isEmpty { parts.append("not found") }
        return parts.isEmpty ? "" : " (" + parts.joined(separator: "; ") + ")"
    }
}

/// One object of a ListObjectsV2 page, its key decoded.
package struct S3Object: Sendable, Equatable {
    var key: String
    var size: Int64?
    var etag: String?
    /// `LastModified` as sent (ISO 8601, UTC).
    var lastModified: String?
}

/// A ListObjectsV2 answer (`ListBucketResult`), read with the XML parser of the WebDAV listing
/// (Foundation's `XMLParser`), external entities not resolved; the caller bounds its size, this
/// reader the number of keys (Spec/remote.md 11.4).
package enum ListBucketReader {
    package struct Page {
        var objects: [S3Object]
        var isTruncated: Bool
        var nextToken: String?
    }

    package static func read(_ data: Data, maximumKeys: Int) throws(FormatError) -> Page {
        let collector = Collector(maximumKeys: maximumKeys)
        let (parsed, line) = try XMLListingInput.parse(data, delegate: collector, what: "the ListObjectsV2 answer is no ListBucketResult")
        if collector.tooMany {
            throw FormatError(.remoteMalformedListing, "a ListObjectsV2 page holds more than \(maximumKeys) keys")
        }
        guard parsed, collector.closedRoot else {
            throw FormatError(.remoteMalformedListing, "the ListObjectsV2 answer is not a ListBucketResult document (XML error near line \(line))")
        }
        var objects = collector.objects
        // `encoding-type=url` was asked for so that any key survives XML 1.0; a server that
        // encoded says so, and its keys are decoded (`+` is a space, as AWS writes it).
        if collector.encodingType == "url" {
            for index in objects.indices {
                guard let key = objects[index].key.replacingOccurrences(of: "+", with: " ").removingPercentEncoding else {
                    throw FormatError(.remoteMalformedListing, "a key that is not URL-encoded: \(objects[index].key)")
                }
                objects[index].key = key
            }
        }
        return Page(objects: objects, isTruncated: collector.isTruncated == "true", nextToken: collector.nextToken)
    }

    private final class Collector: NSObject, XMLParserDelegate {
        let maximumKeys: Int
        var objects: [S3Object] = []
        var tooMany = false
        var closedRoot = false
        var isTruncated = ""
        var nextToken: String?
        var encodingType: String?
        private var path: [String] = []
        private var text = ""
        private var current: S3Object?

        init(maximumKeys: Int) { self.maximumKeys = maximumKeys }

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
            attributes attributeDict: [String: String] = [:]
        ) {
            path.append(elementName)
            text = ""
            if path.count == 1 && elementName != "ListBucketResult" { parser.abortParsing() }
            if path.count == 2 && elementName == "Contents" {
                guard objects.count < maximumKeys else {
                    tooMany = true
                    parser.abortParsing()
                    return
                }
                current = S3Object(key: "")
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            // Values are short (a key is at most 1,024 bytes); a huge text is cut.
            if text.utf8.count < 65536 { text += string }
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
            let depth = path.count
            path.removeLast()
            switch (depth, elementName) {
            case (1, "ListBucketResult"): closedRoot = true
            case (2, "IsTruncated"): isTruncated = text.trimmingCharacters(in: .whitespaces).lowercased()
            case (2, "NextContinuationToken"): nextToken = text
            case (2, "EncodingType"): encodingType = text.trimmingCharacters(in: .whitespaces).lowercased()
            case (2, "Contents"):
                if let current { objects.append(current) }
                current = nil
            case (3, "Key"): current?.key = text
            case (3, "Size"): current?.size = Int64(text.trimmingCharacters(in: .whitespaces))
            case (3, "ETag"): current?.etag = text.isEmpty ? nil : text
            case (3, "LastModified"): current?.lastModified = text.trimmingCharacters(in: .whitespaces)
            default: break
            }
            text = ""
        }
    }
}

/// The `Code` of an S3 error document (`<Error><Code>…</Code>…</Error>`), bounded as the
/// error body is (its first 64 KiB, HTTPTransport).
package enum S3ErrorReader {
    package static func code(_ data: Data) -> String? {
        guard !data.isEmpty else { return nil }
        final class Collector: NSObject, XMLParserDelegate {
            var path: [String] = []
            var text = ""
            var code: String?
            func parser(
                _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
                attributes attributeDict: [String: String] = [:]
            ) {
                path.append(elementName)
                text = ""
            }
            func parser(_ parser: XMLParser, foundCharacters string: String) { if text.count < 256 { text += string } }
            func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
                if path == ["Error", "Code"] { code = text.trimmingCharacters(in: .whitespacesAndNewlines) }
                path.removeLast()
            }
        }
        let collector = Collector()
        // An answer the parser may not see has no code to repeat.
        _ = try? XMLListingInput.parse(data, delegate: collector, what: "the S3 error answer is no Error document")
        // Only a plain code name is repeated: the rest of an answer is the server's to word.
        guard let code = collector.code, (1...64).contains(code.count), code.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == ".") })
        else { return nil }
        return code
    }
}
