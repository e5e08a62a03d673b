import Foundation

/// A stored response as a memory store keeps it until it is first read: its URL, header fields
/// and body in one run of bytes (``ByteStorage``), usually a range of a block the store packs
/// responses into (``PackedBlocks``).
///
/// Most responses a cache stores are never read before they are evicted. As the transport made
/// it, a small response is six objects or so (the fields' array and each field text over 15
/// bytes, the body's storage and its bytes, the URL); kept for the thousands of responses a
/// store holds, and released cold when evicted, they cost a request that misses more than the
/// lookup and the rules do. Packed, a response is a range of bytes and a reference to its block.
/// Reading it back (``unpacked``) makes the response again, equal to the one packed.
///
/// Layout of `bytes`: the URL's UTF-8; then for each field its name's and its value's lengths
/// (LEB128: 7 bits a byte, low bits first, so one byte for a length under 128 and any length
/// fits) and their UTF-8; then the body.
struct PackedResponse: Sendable {
    private let bytes: ByteStorage
    private let urlLength: Int
    private let fieldCount: Int
    let statusCode: Int
    let requestTime: Double
    let responseTime: Double
    let secondaryKey: [String?]
    let credentialKey: String?

    /// The response's ``StoredResponse/cost``, counted while packing it.
    let cost: Int

    init(_ response: borrowing StoredResponse, reserving reserve: (Int) -> (block: ByteBlock, start: Int)? = { _ in nil }) {
        self.init(url: response.url, statusCode: response.statusCode, headers: response.headers, body: response.body,
                  requestTime: response.requestTime, responseTime: response.responseTime,
                  secondaryKey: response.secondaryKey, credentialKey: response.credentialKey, reserving: reserve)
    }

    /// Packs a response from its parts (those of a ``StoredResponse``), all borrowed: the cache
    /// packs what the origin sent straight from the transport's response, copying its bytes and
    /// none of its references. Into the range of a block that `reserve` gives for the bytes'
    /// length (``PackedBlocks/reserve(_:)``), or into storage of their own when it gives none.
    init(url: borrowing String, statusCode: Int, headers: borrowing HTTPFields, body: borrowing Data,
         requestTime: Double, responseTime: Double, secondaryKey: [String?], credentialKey: String?,
         reserving reserve: (Int) -> (block: ByteBlock, start: Int)? = { _ in nil }) {
        // By index: a `for`-`in` loop would consume a copy of the borrowed fields.
        var fieldBytes = 0, lengthBytes = 0
        for index in headers.startIndex..<headers.endIndex {
            let field = headers[index]
            let name = field.name.utf8.count, value = field.value.utf8.count
            fieldBytes += name + value
            lengthBytes += ByteWriter.leb128Size(name) + ByteWriter.leb128Size(value)
        }
        // Written into the array's storage once, at its exact size: appended piece by piece the
        // packing cost more than the objects it saves.
        let urlLength = url.utf8.count
        let length = urlLength + lengthBytes + fieldBytes + body.count
        func write(_ writer: inout ByteWriter) {
            writer.write(url)
            for index in headers.startIndex..<headers.endIndex {
                let field = headers[index]
                writer.writeLengthsAndBytes(field.name, field.value)
            }
            writer.write(body)
        }
        if let range = reserve(length) {
            bytes = ByteStorage(in: range.block, at: range.start, writingAtMost: length, write)
        } else {
            bytes = ByteStorage(writingAtMost: length, write)
        }
        self.urlLength = urlLength
        fieldCount = headers.count
        self.statusCode = statusCode
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.secondaryKey = secondaryKey
        self.credentialKey = credentialKey
        cost = StoredResponse.cost(urlLength: urlLength, fieldCount: fieldCount, fieldBytes: fieldBytes,
                                   bodyCount: body.count, secondaryKey: secondaryKey, credentialKey: credentialKey)
    }

    /// The response packed, made again.
    var unpacked: StoredResponse {
        var fields: [HTTPField] = []
        fields.reserveCapacity(fieldCount)
        var offset = urlLength
        for _ in 0..<fieldCount {
            let nameLength = readLength(at: &offset), valueLength = readLength(at: &offset)
            let nameStart = offset, valueStart = nameStart + nameLength
            offset = valueStart + valueLength
            fields.append(HTTPField(name: bytes.string(nameStart..<valueStart),
                                    value: bytes.string(valueStart..<offset)))
        }
        return StoredResponse(url: bytes.string(0..<urlLength), statusCode: statusCode, headers: HTTPFields(fields),
                              body: bytes.data(offset..<bytes.count), requestTime: requestTime,
                              responseTime: responseTime, secondaryKey: secondaryKey, credentialKey: credentialKey)
    }

    /// Whether the response packed was stored for `url` (its ``StoredResponse/url``), found
    /// without making a string of the packed one.
    func hasURL(_ url: String) -> Bool {
        bytes.equals(0..<urlLength, url)
    }

    /// The length written at `offset`, which moves past it.
    private func readLength(at offset: inout Int) -> Int {
        var length = 0, shift = 0
        while true {
            let byte = bytes[offset]
            offset += 1
            length |= Int(byte & 0x7F) << shift
            if byte < 0x80 { return length }
            shift += 7
        }
    }
}
