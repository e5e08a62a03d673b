import Foundation
import XCTest
@testable import Courier

// Seeded property tests of the parameter encoders: thousands of random nested values (unicode
// of every plane, control characters, reserved URL characters, extreme numbers, nils, nested
// dictionaries, arrays, structs and classes) are encoded as query strings and forms, JSON and
// multipart bodies, parsed back by Foundation and by Python's standard library, and compared
// with what the documented rules say they must be (FuzzReference).
//
// Every run uses the fixed seeds below plus one random seed, all printed. A failure names its
// seed and case and dumps the value. Replay with
//     COURIER_FUZZ_SEED=<seed> [COURIER_FUZZ_CASE=<index>] swift test --filter Fuzz
// (COURIER_FUZZ_CASES=<n> changes the number of cases per seed; COURIER_FUZZ_TRACE=1 prints
// every case before it is encoded, to find a case that crashes the process).

/// The public entry points, with the default options, around a generated value.
private struct FuzzQueryParameters: DefaultQueryString, ParameterConvertible {
    let value: any Sendable
    var parameterValue: any Sendable { value }
}

private struct FuzzFormParameters: URLEncodedBodyData, ParameterConvertible {
    let value: any Sendable
    var parameterValue: any Sendable { value }
}

private struct FuzzJSONParameters: JSONBodyData, ParameterConvertible {
    let value: any Sendable
    var parameterValue: any Sendable { value }
}

class EncodingFuzzTests: XCTestCase {
    // MARK: Seeds

    static let fixedSeeds: [UInt64] = [0xC0FFEE, 42, 0x5EED_F00D_DEAD_BEEF]

    private static var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// Cases per seed of the query and JSON tests; the multipart test runs a quarter as many forms
    /// (of about 4 parts each: Python's email parser takes about a millisecond a part), the NaN test a fifth.
    private static var casesPerSeed: Int {
        environment["COURIER_FUZZ_CASES"].flatMap { Int($0) } ?? 1000
    }

    /// The fixed seeds and one random seed, or only `COURIER_FUZZ_SEED` (decimal or 0x-hex) to replay one.
    private static func seeds(_ test: String, cases: Int) -> [UInt64] {
        let seeds: [UInt64]
        if let text = environment["COURIER_FUZZ_SEED"] {
            let parsed = text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
            guard let parsed else { preconditionFailure("COURIER_FUZZ_SEED=\(text) is not a UInt64") }
            seeds = [parsed]
        } else {
            seeds = fixedSeeds + [UInt64.random(in: 1...UInt64.max)]
        }
        let count = environment["COURIER_FUZZ_CASE"].map { "case \($0) only" } ?? "\(cases) cases each"
        print("\(test): seeds \(seeds.map(String.init).joined(separator: ", ")), \(count) (replay: COURIER_FUZZ_SEED=<seed> [COURIER_FUZZ_CASE=<case>] swift test --filter Fuzz)")
        return seeds
    }

    /// With `COURIER_FUZZ_TRACE` set, prints a case before it is encoded: a crash cannot report its seed.
    private static func trace(_ context: @autoclosure () -> String) {
        if environment["COURIER_FUZZ_TRACE"] != nil { FileHandle.standardError.write(Data(("COURIER_FUZZ_TRACE " + context() + "\n").utf8)) }
    }

    /// The case indexes to run: `0..<count`, or only `COURIER_FUZZ_CASE`.
    private static func caseIndexes(_ count: Int) -> [Int] {
        if let index = environment["COURIER_FUZZ_CASE"].flatMap({ Int($0) }) { return [index] }
        return Array(0..<max(count, 1))
    }

    /// Each case has its own generator, so one case replays without the ones before it.
    private static func generator(seed: UInt64, index: Int, salt: UInt64, allowsNonFinite: Bool) -> FuzzGenerator {
        var mixer = SeededGenerator(seed: seed ^ salt)
        for _ in 0...(index % 7) { _ = mixer.next() }
        return FuzzGenerator(seed: mixer.next() &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15, allowsNonFinite: allowsNonFinite)
    }

    // MARK: Query strings and forms

    func testQueryStringsAndFormsReadBackAsTheirFields() throws {
        var log = FuzzLog()
        var pythonCases: [(context: () -> String, expected: [ExpectedField])] = []
        var requests: [FuzzPython.Request] = []

        for seed in Self.seeds("testQueryStringsAndFormsReadBackAsTheirFields", cases: Self.casesPerSeed) {
            for index in Self.caseIndexes(Self.casesPerSeed) {
                // Given a random dictionary or record and random options
                var generator = Self.generator(seed: seed, index: index, salt: 0x51, allowsNonFinite: true)
                let value = generator.topLevelContainer(depth: 4)
                let options = generator.options(allowCommaSeparated: FuzzReference.allArraysHoldScalars(value))
                // Built only for a failure: dumps are slow.
                let context = { "seed \(seed) case \(index) (query)\noptions: \(options.fuzzDescription)\nvalue: \(value.dump)" }

                // When encoded
                Self.trace(context())
                let query: String
                do {
                    query = try encodeQuery(value.swiftValue, options: options)
                } catch {
                    log.fail("\(context())\nencodeQuery threw \(error)")
                    continue
                }

                // Then it is exactly the percent-encoded reference fields, and reads back as them
                let expected = FuzzReference.formFields(value, options: options)
                let expectedQuery = FuzzReference.query(expected, options: options)
                if query != expectedQuery {
                    log.fail("\(context())\nquery:    \(query)\nexpected: \(expectedQuery)")
                }
                if let problem = Self.checkQuerySyntax(query, plus: options.spaceStyle == .plus, commas: options.arrayStyle == .commaSeparated) {
                    log.fail("\(context())\nquery: \(query)\n\(problem)")
                } else if let problem = Self.compare(Self.foundationFields(query, plus: options.spaceStyle == .plus), expected, checkNumbers: true,
                                                     ignoringByteOrderMarks: true) {
                    log.fail("\(context())\nquery: \(query)\nFoundation: \(problem)")
                }
                if options == .default {
                    Self.checkPublicQueryAndForm(value, query: query, context: context, log: &log)
                }
                requests.append(FuzzPython.Request(kind: "form", data: Data(query.utf8)))
                pythonCases.append(({ context() + "\nquery: \(query)" }, expected))
            }
        }

        // And Python's parse_qsl reads every case back as the reference fields
        let answers = try FuzzPython.parse(requests)
        for (answer, (context, expected)) in zip(answers, pythonCases) {
            guard let pairs = answer["ok"] as? [[String]] else {
                log.fail("\(context())\nPython: \(answer["error"] ?? answer)")
                continue
            }
            let fields = pairs.map { (name: Self.bytes(hex: $0[0]), value: Self.bytes(hex: $0[1])) }
            if let problem = Self.compare(fields, expected, checkNumbers: false) {
                log.fail("\(context())\nPython parse_qsl: \(problem)")
            }
        }
        log.report()
    }

    /// The public `DefaultQueryString` and `URLEncodedBodyData` give the same bytes as `encodeQuery`.
    private static func checkPublicQueryAndForm(_ value: FuzzValue, query: String, context: () -> String, log: inout FuzzLog) {
        do {
            let publicQuery = try FuzzQueryParameters(value: value.swiftValue).encode()
            if publicQuery != query { log.fail("\(context())\nDefaultQueryString.encode(): \(publicQuery)\nencodeQuery: \(query)") }
            let body = try FuzzFormParameters(value: value.swiftValue).encode()
            if body != Data(query.utf8) { log.fail("\(context())\nURLEncodedBodyData.encode(): \(fuzzBytes(body))\nencodeQuery: \(query)") }
        } catch {
            log.fail("\(context())\npublic encode() threw \(error)")
        }
    }

    /// Only unreserved characters, `%XX` with uppercase hex, `&`, `=`, with `.plus` `+` and with
    /// `.commaSeparated` `,`; one `=` per pair.
    private static func checkQuerySyntax(_ query: String, plus: Bool, commas: Bool) -> String? {
        let bytes = Array(query.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                let hex = Array("0123456789ABCDEF".utf8)
                guard index + 2 < bytes.count, hex.contains(bytes[index + 1]), hex.contains(bytes[index + 2]) else {
                    return "bad percent escape at byte \(index)"
                }
                index += 3
                continue
            }
            guard FuzzReference.isUnreserved(byte) || byte == UInt8(ascii: "&") || byte == UInt8(ascii: "=") || (plus && byte == UInt8(ascii: "+"))
                    || (commas && byte == UInt8(ascii: ",")) else {
                return "byte \(fuzzBytes([byte])) at \(index) must be percent-encoded"
            }
            index += 1
        }
        if !query.isEmpty {
            for pair in query.split(separator: "&", omittingEmptySubsequences: false) where pair.filter({ $0 == "=" }).count != 1 {
                return "pair \(pair) does not have exactly one ="
            }
        }
        return nil
    }

    /// The fields as Foundation reads them. With `%20` spaces: `URLComponents.queryItems`. With `+`
    /// spaces, `queryItems` would keep `+` (it follows RFC 3986, where `+` is not a space), so the
    /// pairs are split on `&` and the first `=`, `+` is replaced by `%20`, and each side is decoded
    /// with `removingPercentEncoding` (a literal `+` is always `%2B`, so nothing else changes).
    /// Both drop a U+FEFF that starts a name or value (swift-corelibs-foundation, Swift 6.3.1 on
    /// Linux; not Courier's bug), so they are compared without U+FEFF; Python compares exactly.
    private static func foundationFields(_ query: String, plus: Bool) -> [(name: [UInt8], value: [UInt8])]? {
        if !plus {
            var components = URLComponents()
            components.percentEncodedQuery = query
            guard let items = components.queryItems else { return nil }
            return items.map { (Array($0.name.utf8), Array(($0.value ?? "<no value>").utf8)) }
        }
        if query.isEmpty { return [] }
        var fields: [(name: [UInt8], value: [UInt8])] = []
        for pair in query.split(separator: "&", omittingEmptySubsequences: false) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                $0.replacingOccurrences(of: "+", with: "%20").removingPercentEncoding
            }
            guard parts.count == 2, let name = parts[0], let value = parts[1] else { return nil }
            fields.append((Array(name.utf8), Array(value.utf8)))
        }
        return fields
    }

    /// The first difference between parsed fields and the reference, compared byte for byte
    /// (without U+FEFF if `ignoringByteOrderMarks`). `checkNumbers` also checks that every
    /// number's text reads back as exactly that number.
    private static func compare(_ actual: [(name: [UInt8], value: [UInt8])]?, _ expected: [ExpectedField], checkNumbers: Bool,
                                ignoringByteOrderMarks: Bool = false) -> String? {
        guard let actual else { return "could not parse" }
        let normalized = { (bytes: [UInt8]) in ignoringByteOrderMarks ? withoutByteOrderMarks(bytes) : bytes }
        for (index, expectedField) in expected.enumerated() {
            guard index < actual.count else {
                return "\(actual.count) fields, expected \(expected.count); missing #\(index) \(fuzzLiteral(expectedField.name))=\(fuzzLiteral(expectedField.value))"
            }
            let field = actual[index]
            if normalized(field.name) != normalized(Array(expectedField.name.utf8)) || normalized(field.value) != normalized(Array(expectedField.value.utf8)) {
                return "field #\(index) is \(fuzzBytes(field.name))=\(fuzzBytes(field.value)), expected \(fuzzLiteral(expectedField.name))=\(fuzzLiteral(expectedField.value))"
            }
            if checkNumbers, let number = expectedField.number, let problem = checkNumberText(String(decoding: field.value, as: UTF8.self), number) {
                return "field #\(index) \(fuzzLiteral(expectedField.name)): \(problem)"
            }
        }
        if actual.count > expected.count {
            return "\(actual.count) fields, expected \(expected.count); extra #\(expected.count) \(fuzzBytes(actual[expected.count].name))=\(fuzzBytes(actual[expected.count].value))"
        }
        return nil
    }

    /// UTF-8 without U+FEFF (`EF BB BF`, which in valid UTF-8 is only ever that scalar).
    private static func withoutByteOrderMarks(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if index + 2 < bytes.count, bytes[index] == 0xEF, bytes[index + 1] == 0xBB, bytes[index + 2] == 0xBF {
                index += 3
                continue
            }
            result.append(bytes[index])
            index += 1
        }
        return result
    }

    /// The text reads back as exactly the number (NaN as a NaN).
    private static func checkNumberText(_ text: String, _ number: ExpectedNumber) -> String? {
        switch number {
        case .double(let value):
            guard let parsed = Double(text), parsed.bitPattern == value.bitPattern || (parsed.isNaN && value.isNaN) else {
                return "\(text) does not read back as the Double with bits 0x\(String(value.bitPattern, radix: 16))"
            }
        case .float(let value):
            guard let parsed = Float(text), parsed.bitPattern == value.bitPattern || (parsed.isNaN && value.isNaN) else {
                return "\(text) does not read back as the Float with bits 0x\(String(value.bitPattern, radix: 16))"
            }
        }
        return nil
    }

    // MARK: JSON

    func testJSONReadsBackAsTheValue() throws {
        var log = FuzzLog()
        var pythonCases: [(context: () -> String, expected: ExpectedJSON)] = []
        var requests: [FuzzPython.Request] = []

        for seed in Self.seeds("testJSONReadsBackAsTheValue", cases: Self.casesPerSeed) {
            for index in Self.caseIndexes(Self.casesPerSeed) {
                // Given a random value of any shape (finite numbers only) and random options
                var generator = Self.generator(seed: seed, index: index, salt: 0x15, allowsNonFinite: false)
                let value = generator.chance(85) ? generator.topLevelContainer(depth: 5) : generator.value(depth: 4)
                let options = generator.options(allowCommaSeparated: true)  // JSON ignores the array style
                let context = { "seed \(seed) case \(index) (JSON)\noptions: \(options.fuzzDescription)\nvalue: \(value.dump)" }

                // When encoded
                Self.trace(context())
                let data: Data
                do {
                    data = try encodeJSON(value.swiftValue, options: options)
                } catch {
                    log.fail("\(context())\nencodeJSON threw \(error)")
                    continue
                }
                let jsonContext = { context() + "\njson: \(fuzzBytes(data))" }

                // Then it is UTF-8 with every control character escaped, and Foundation reads back the value
                if String(validating: data, as: UTF8.self) == nil { log.fail("\(jsonContext())\nnot UTF-8") }
                if let control = data.first(where: { $0 < 0x20 }) { log.fail("\(jsonContext())\nunescaped control byte \(control)") }
                let expected = FuzzReference.json(value, options: options)
                do {
                    let object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
                    if let problem = Self.compareFoundation(object, expected, path: "$") {
                        log.fail("\(jsonContext())\nJSONSerialization: \(problem)")
                    }
                } catch {
                    log.fail("\(jsonContext())\nJSONSerialization threw \(error)")
                }
                if options == .default {
                    do {
                        let body = try FuzzJSONParameters(value: value.swiftValue).encode()
                        if body != data { log.fail("\(jsonContext())\nJSONBodyData.encode(): \(fuzzBytes(body))") }
                    } catch {
                        log.fail("\(jsonContext())\nJSONBodyData.encode() threw \(error)")
                    }
                }
                requests.append(FuzzPython.Request(kind: "json", data: data))
                pythonCases.append((jsonContext, expected))
            }
        }

        // And Python's json.loads reads back the value, every number's text exactly
        let answers = try FuzzPython.parse(requests)
        for (answer, (context, expected)) in zip(answers, pythonCases) {
            guard let tree = answer["ok"] else {
                log.fail("\(context())\nPython: \(answer["error"] ?? answer)")
                continue
            }
            if let problem = Self.comparePython(tree, expected, path: "$") {
                log.fail("\(context())\nPython json.loads: \(problem)")
            }
        }
        log.report()
    }

    private static func isBool(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c"
    }

    /// The first difference between a `JSONSerialization` result and the expected value.
    /// Exact checks are Python's job; this one allows for two bugs of swift-corelibs-foundation's
    /// JSONSerialization (Swift 6.3.1, Linux), neither of them Courier's:
    /// - it drops a U+FEFF that starts a string or follows an escape (`"\u{FEFF}b"` reads as `"b"`,
    ///   `"\\u0016\u{FEFF}"` as `"\u{16}"`), so strings are compared without U+FEFF;
    /// - it does not round decimal text correctly (`-965427.9096189113` reads 2 ulps off, and
    ///   numbers with large exponents like `1.2205312967262148e-91` further), so Doubles need only
    ///   agree to 1e-12 relative here; Python's `float()` checks them bit for bit.
    /// It also reads the integer token `-0` as the integer 0; the sign of zero is checked on Python's side.
    /// Integers in 64-bit range are compared by exact decimal text.
    private static func compareFoundation(_ actual: Any, _ expected: ExpectedJSON, path: String) -> String? {
        switch expected {
        case .string(let text):
            let withoutBOM = { (text: String) in Array(text.unicodeScalars.filter { $0 != "\u{FEFF}" }) }
            guard let string = actual as? String, withoutBOM(string) == withoutBOM(text) else {
                return "\(path): \((actual as? String).map(fuzzLiteral) ?? "\(actual)"), expected \(fuzzLiteral(text))"
            }
        case .bool(let bool):
            guard let number = actual as? NSNumber, isBool(number), number.boolValue == bool else { return "\(path): \(actual), expected \(bool)" }
        case .integer(let text):
            guard let number = actual as? NSNumber, !isBool(number) else { return "\(path): \(actual), expected the integer \(text)" }
            if Int64(text) != nil || UInt64(text) != nil, number.stringValue != text {
                return "\(path): \(number.stringValue), expected the integer \(text)"
            }
        case .double(let double):
            guard let number = actual as? NSNumber, !isBool(number),
                  number.doubleValue == double || (number.doubleValue - double).magnitude <= double.magnitude * 1e-12 else {
                return "\(path): \(actual), expected the Double \(double)"
            }
        case .float(let float):
            guard let number = actual as? NSNumber, !isBool(number),
                  Float(number.doubleValue) == float || (Float(number.doubleValue) - float).magnitude <= float.ulp else {
                return "\(path): \(actual), expected the Float \(float)"
            }
        case .null:
            guard actual is NSNull else { return "\(path): \(actual), expected null" }
        case .array(let elements):
            guard let array = actual as? [Any], array.count == elements.count else {
                return "\(path): \(actual), expected an array of \(elements.count)"
            }
            for (index, (item, element)) in zip(array, elements).enumerated() {
                if let problem = compareFoundation(item, element, path: "\(path)[\(index)]") { return problem }
            }
        case .object(let entries):
            guard let object = actual as? [String: Any] else { return "\(path): \(actual), expected an object" }
            // Keys without U+FEFF (see above); keys that differ only by U+FEFF collide then, and
            // such an object is left to Python.
            let withoutBOM = { (key: String) in String(String.UnicodeScalarView(key.unicodeScalars.filter { $0 != "\u{FEFF}" })) }
            var items: [String: Any] = [:]
            for (key, item) in object { items[withoutBOM(key)] = item }
            guard Set(entries.map { withoutBOM($0.key) }).count == entries.count else { return nil }
            guard items.count == entries.count else { return "\(path): \(actual), expected an object of \(entries.count) keys" }
            for entry in entries {
                let childPath = "\(path)[\(fuzzLiteral(entry.key))]"
                guard let item = items[withoutBOM(entry.key)] else { return "\(childPath) is missing" }
                if let problem = compareFoundation(item, entry.value, path: childPath) { return problem }
            }
        }
        return nil
    }

    /// The first difference between Python's tagged tree and the expected value: strings by UTF-8
    /// bytes, objects in order, integers by their exact text, Doubles and Floats by their exact
    /// documented text and the bits of the number Python reads.
    private static func comparePython(_ actual: Any, _ expected: ExpectedJSON, path: String) -> String? {
        guard let node = actual as? [String: Any] else { return "\(path): bad node \(actual)" }
        switch expected {
        case .string(let text):
            guard node["s"] as? String == hex(text.utf8) else { return "\(path): \(node), expected \(fuzzLiteral(text))" }
        case .bool(let bool):
            guard let value = node["t"] as? Bool, value == bool else { return "\(path): \(node), expected \(bool)" }
        case .integer(let text):
            guard node["i"] as? String == text else { return "\(path): \(node), expected the integer token \(text)" }
        case .double(let double):
            let token = (node["i"] ?? node["d"]) as? String
            guard token == FuzzReference.text(double) else {
                return "\(path): \(node), expected the token \(FuzzReference.text(double)) for the Double with bits 0x\(String(double.bitPattern, radix: 16))"
            }
            guard node["bits"] as? String == hex64(double.bitPattern) else {
                return "\(path): \(node) reads back as another Double than the one with bits \(hex64(double.bitPattern))"
            }
        case .float(let float):
            let token = (node["i"] ?? node["d"]) as? String
            guard token == FuzzReference.text(float), let parsed = token.flatMap({ Float($0) }), parsed.bitPattern == float.bitPattern else {
                return "\(path): \(node), expected the token \(FuzzReference.text(float)) for the Float with bits 0x\(String(float.bitPattern, radix: 16))"
            }
        case .null:
            guard node["z"] != nil else { return "\(path): \(node), expected null" }
        case .array(let elements):
            guard let array = node["a"] as? [Any], array.count == elements.count else {
                return "\(path): \(node), expected an array of \(elements.count)"
            }
            for (index, (item, element)) in zip(array, elements).enumerated() {
                if let problem = comparePython(item, element, path: "\(path)[\(index)]") { return problem }
            }
        case .object(let entries):
            guard let pairs = node["o"] as? [[Any]], pairs.count == entries.count else {
                return "\(path): \(node), expected an object of \(entries.count) keys"
            }
            for (index, (pair, entry)) in zip(pairs, entries).enumerated() {
                let childPath = "\(path)[\(fuzzLiteral(entry.key))]"
                guard pair.count == 2, pair[0] as? String == hex(entry.key.utf8) else {
                    return "\(path): key #\(index) is \(pair.first.map { fuzzBytes(bytes(hex: "\($0)")) } ?? "missing"), expected \(fuzzLiteral(entry.key))"
                }
                if let problem = comparePython(pair[1], entry.value, path: childPath) { return problem }
            }
        }
        return nil
    }

    // MARK: NaN and infinity in JSON

    func testNonFiniteNumbersInJSONThrowInvalidParametersWithTheirKeyPath() throws {
        var log = FuzzLog()
        for seed in Self.seeds("testNonFiniteNumbersInJSONThrowInvalidParametersWithTheirKeyPath", cases: Self.casesPerSeed / 5) {
            for index in Self.caseIndexes(Self.casesPerSeed / 5) {
                // Given a random finite value with one NaN or infinity put somewhere in it
                var generator = Self.generator(seed: seed, index: index, salt: 0x4E, allowsNonFinite: false)
                let value: FuzzValue
                let keyPath: String
                if generator.chance(20) {
                    (value, keyPath) = Self.recordWithNonFinite(&generator)
                } else {
                    let finite = generator.chance(80) ? generator.topLevelContainer(depth: 4) : generator.value(depth: 3)
                    (value, keyPath) = Self.insertNonFinite(into: finite, path: "", &generator)
                }
                let options = generator.options(allowCommaSeparated: true)
                let context = { "seed \(seed) case \(index) (JSON non-finite)\noptions: \(options.fuzzDescription)\nvalue: \(value.dump)" }

                // When encoded as JSON
                // Then it throws invalidParameters at the non-finite number's key path
                Self.trace(context())
                do {
                    let data = try encodeJSON(value.swiftValue, options: options)
                    log.fail("\(context())\nencoded as \(fuzzBytes(data)) instead of throwing")
                } catch RequestError.invalidParameters(let actualKeyPath, let reason) {
                    if actualKeyPath != keyPath || !reason.contains("JSON") {
                        log.fail("\(context())\nthrew invalidParameters(keyPath: \(fuzzLiteral(actualKeyPath)), reason: \(fuzzLiteral(reason))), expected the key path \(fuzzLiteral(keyPath))")
                    }
                } catch {
                    log.fail("\(context())\nthrew \(error), expected invalidParameters")
                }
            }
        }
        log.report()
    }

    private static func nonFinite(_ generator: inout FuzzGenerator) -> FuzzValue {
        switch generator.below(4) {
        case 0: .double(generator.pick([.nan, .infinity, -.infinity, -Double.nan]))
        case 1: .float(generator.pick([.nan, .infinity, -.infinity]))
        case 2: .wrapped(.double(.infinity))
        default: .double(generator.pick([.infinity, -.infinity]))
        }
    }

    /// `value` with one leaf replaced by, or one entry or element added as, a NaN or infinity;
    /// and its key path in the documented format: `["key"]` for entries, `[2]` for elements.
    private static func insertNonFinite(into value: FuzzValue, path: String, _ generator: inout FuzzGenerator) -> (FuzzValue, String) {
        switch value {
        case .wrapped(let wrapped):
            let (inserted, path) = insertNonFinite(into: wrapped, path: path, &generator)
            return (.wrapped(inserted), path)
        case .array(var elements, let kind):
            if !elements.isEmpty, generator.chance(60) {
                let index = generator.below(elements.count)
                let (inserted, childPath) = insertNonFinite(into: elements[index], path: path + "[\(index)]", &generator)
                elements[index] = inserted
                return (.array(elements, kind), childPath)
            }
            let index = generator.below(elements.count + 1)
            elements.insert(nonFinite(&generator), at: index)
            return (.array(elements, kind), path + "[\(index)]")
        case .dictionary(var entries, let kind):
            if !entries.isEmpty, generator.chance(60) {
                let index = generator.below(entries.count)
                let (inserted, childPath) = insertNonFinite(into: entries[index].value, path: path + "[\"\(entries[index].key)\"]", &generator)
                entries[index].value = inserted
                return (.dictionary(entries, kind), childPath)
            }
            let key = generator.key() + "\u{1F4A5}"
            guard !entries.contains(where: { $0.key == key }) else { return insertNonFinite(into: value, path: path, &generator) }
            entries.append((key, nonFinite(&generator)))
            entries.sort { $0.key < $1.key }
            return (.dictionary(entries, kind), path + "[\"\(key)\"]")
        default:
            return (nonFinite(&generator), path)
        }
    }

    /// A record with a non-finite number in one of its properties, and the key path in Swift terms
    /// (`address.geo[1]`, `extra["k"]`).
    private static func recordWithNonFinite(_ generator: inout FuzzGenerator) -> (FuzzValue, String) {
        let base = generator.profile(depth: 2)
        var profile = base.instance as! FuzzProfile
        var fields = base.fields
        func replace(_ name: String, with value: FuzzValue) {
            fields[fields.firstIndex { $0.name == name }!].value = value
        }
        let keyPath: String
        switch generator.below(5) {
        case 0:
            profile.score = .nan
            replace("score", with: .double(.nan))
            keyPath = "score"
        case 1:
            profile.ratio = -.infinity
            replace("ratio", with: .float(-.infinity))
            keyPath = "ratio"
        case 2:
            let index = generator.below(profile.address.geo.count + 1)
            profile.address.geo.insert(.infinity, at: index)
            keyPath = "address.geo[\(index)]"
        case 3:
            var backup = profile.backup ?? profile.address
            backup.geo = [1, 2, .nan]
            profile.backup = backup
            keyPath = "backup.geo[2]"
        default:
            profile.extra["\u{1F4A5}"] = Double.infinity
            keyPath = "extra[\"\u{1F4A5}\"]"
        }
        // The dump shows the record before the change for the cases that alter nested values; the key path says where.
        return (.record(FuzzRecord(typeName: "FuzzProfile (changed at \(keyPath))", instance: profile, fields: fields)), keyPath)
    }

    // MARK: Multipart

    func testMultipartPartsReadBackWithTheirNamesFileNamesAndBytes() throws {
        var log = FuzzLog()
        var pythonCases: [(context: () -> String, parts: [ExpectedPart])] = []
        var requests: [FuzzPython.Request] = []
        var emptyForms = 0

        for seed in Self.seeds("testMultipartPartsReadBackWithTheirNamesFileNamesAndBytes", cases: Self.casesPerSeed / 4) {
            for index in Self.caseIndexes(Self.casesPerSeed / 4) {
                // Given a form with random text fields, data parts and parameter fields
                var generator = Self.generator(seed: seed, index: index, salt: 0x3A, allowsNonFinite: true)
                let boundary = "courier-" + Self.hex((0..<16).map { _ in UInt8(truncatingIfNeeded: generator.random.next()) })
                let form = MultipartFormData(boundary: boundary)
                var expected: [ExpectedPart] = []
                var description: [String] = []
                do {
                    for _ in 0..<(generator.chance(5) ? 0 : 1 + generator.below(4)) {
                        try Self.appendRandomPart(to: form, expected: &expected, description: &description, &generator)
                    }
                } catch {
                    log.fail("seed \(seed) case \(index) (multipart)\nparts: \(description.joined(separator: "\n"))\nappending threw \(error)")
                    continue
                }
                let parts = expected
                let calls = description
                let context = {
                    "seed \(seed) case \(index) (multipart, boundary \(boundary))\nparts:\n" + calls.joined(separator: "\n")
                        + "\nexpected parts:\n" + parts.map(\.dump).joined(separator: "\n")
                }

                // When encoded
                let body: Data
                do {
                    body = try form.encode()
                } catch {
                    log.fail("\(context())\nencode() threw \(error)")
                    continue
                }

                // Then the body is exactly the reference parts, and its announced length is right
                let expectedBody = expected.reduce(Data()) { $0 + $1.bytes(boundary: boundary) } + Data("--\(boundary)--\r\n".utf8)
                if body != expectedBody {
                    log.fail("\(context())\nbody:     \(fuzzBytes(body))\nexpected: \(fuzzBytes(expectedBody))")
                }
                if (try? form.contentLength) != Int64(body.count) {
                    log.fail("\(context())\ncontentLength \(String(describing: try? form.contentLength)) for \(body.count) bytes")
                }
                if form.contentType != "multipart/form-data; boundary=\(boundary)" {
                    log.fail("\(context())\ncontentType \(form.contentType)")
                }
                // Python's email parser cannot read a multipart body with no part (RFC 2046 requires one).
                if expected.isEmpty {
                    emptyForms += 1
                    continue
                }
                requests.append(FuzzPython.Request(kind: "multipart", data: body, boundary: boundary))
                pythonCases.append(({ context() + "\nbody: \(fuzzBytes(body))" }, expected))
            }
        }
        let partCount = pythonCases.reduce(0) { $0 + $1.parts.count }
        print("testMultipartPartsReadBackWithTheirNamesFileNamesAndBytes: \(requests.count) forms of \(partCount) parts parsed by Python, \(emptyForms) empty forms checked byte for byte only")

        // And Python's email parser reads every part back
        let answers = try FuzzPython.parse(requests)
        for (answer, (context, parts)) in zip(answers, pythonCases) {
            guard let result = answer["ok"] as? [String: Any] else {
                log.fail("\(context())\nPython: \(answer["error"] ?? answer)")
                continue
            }
            if let problem = Self.comparePythonMultipart(result, parts) {
                log.fail("\(context())\nPython email parser: \(problem)")
            }
        }
        log.report()
    }

    /// A part name or file name: random text, often with `"`, CR, LF or a literal `%22`.
    private static func headerText(_ generator: inout FuzzGenerator) -> String {
        var text = generator.string(maxLength: 10)
        for _ in 0..<generator.below(3) where generator.chance(50) {
            let insertion = generator.pick(["\"", "\r", "\n", "\r\n", "%22", "\\", "é", "\u{1F600}", ";", "="])
            let scalars = Array(text.unicodeScalars)
            let at = generator.below(scalars.count + 1)
            var result = String.UnicodeScalarView()
            result.append(contentsOf: scalars[..<at])
            result.append(contentsOf: insertion.unicodeScalars)
            result.append(contentsOf: scalars[at...])
            text = String(result)
        }
        return text
    }

    /// File name endings and the type the documented guess gives them (case-insensitive extension
    /// after the last dot; unknown or none: `application/octet-stream`).
    private static let fileNameEndings: [(ending: String, type: String)] = [
        (".png", "image/png"), (".JPG", "image/jpeg"), (".tar.gz", "application/gzip"), (".Json", "application/json"),
        (".mp4", "video/mp4"), (".bin", "application/octet-stream"), (".", "application/octet-stream"), ("", "application/octet-stream"),
    ]

    private static let mimeTypes = [
        "text/plain", "text/plain; charset=utf-8", "image/png", "application/x-custom+json", "application/octet-stream",
        "text/plain\r\nX-Evil: 1", "image/\rpng", "application/\njson", "text/csv;\r\n\r\n--forged", "", "x/é\u{1F600}",
    ]

    private static func appendRandomPart(to form: MultipartFormData, expected: inout [ExpectedPart], description: inout [String],
                                         _ generator: inout FuzzGenerator) throws {
        switch generator.below(5) {
        case 0, 1:
            let name = headerText(&generator)
            let value = generator.string(maxLength: 30)
            form.append(value: value, withName: name)
            expected.append(ExpectedPart(name: name, fileName: nil, contentType: nil, content: Data(value.utf8)))
            description.append("append(value: \(fuzzLiteral(value)), withName: \(fuzzLiteral(name)))")
        case 2, 3:
            let name = headerText(&generator)
            var content = Data((0..<generator.below(48)).map { _ in UInt8(truncatingIfNeeded: generator.random.next()) })
            if generator.chance(40) {
                content.insert(contentsOf: generator.pick([Data("\r\n--".utf8), Data("\r\n\r\n".utf8), Data("--courier-".utf8), Data([0, 0xFF, 0x0D])]),
                               at: generator.below(content.count + 1))
            }
            var fileName: String?
            var guessedType = "application/octet-stream"
            if generator.chance(60) {
                let ending = generator.pick(fileNameEndings)
                fileName = String(headerText(&generator).unicodeScalars.filter { $0 != "." }.map(Character.init)) + ending.ending
                guessedType = ending.type
            }
            let mimeType = generator.chance(40) ? generator.pick(mimeTypes) : nil
            form.append(data: content, withName: name, fileName: fileName, mimeType: mimeType)
            expected.append(ExpectedPart(name: name, fileName: fileName, contentType: mimeType.map(FuzzReference.withoutLineBreaks) ?? guessedType, content: content))
            description.append("append(data: \(fuzzBytes(content)), withName: \(fuzzLiteral(name)), fileName: \(fileName.map(fuzzLiteral) ?? "nil"), mimeType: \(mimeType.map(fuzzLiteral) ?? "nil"))")
        default:
            let prefix = generator.chance(50) ? headerText(&generator) : nil
            // Small values: the query test covers the flattening; here the names and bytes matter.
            let value = prefix == nil ? generator.topLevelContainer(depth: 2) : generator.value(depth: 2)
            let options = generator.options(allowCommaSeparated: FuzzReference.allArraysHoldScalars(value))
            let fields = FuzzReference.formFields(value, options: options, namePrefix: prefix)
            if options == .default {
                try form.append(parameters: FuzzFormParameters(value: value.swiftValue), withName: prefix)
                description.append("append(parameters: \(value.dump), withName: \(prefix.map(fuzzLiteral) ?? "nil"))")
            } else {
                let encoded = try encodeFormFields(value.swiftValue, withName: prefix, options: options)
                let actual = encoded.map { (name: Array($0.name.utf8), value: Array($0.value.utf8)) }
                description.append("encodeFormFields(\(value.dump), withName: \(prefix.map(fuzzLiteral) ?? "nil"), options: \(options.fuzzDescription)), each field appended with append(value:withName:)")
                if let problem = compare(actual, fields, checkNumbers: true) {
                    throw FuzzMismatch("encodeFormFields: \(problem)")
                }
                for field in encoded { form.append(value: field.value, withName: field.name) }
            }
            for field in fields {
                expected.append(ExpectedPart(name: field.name, fileName: nil, contentType: nil, content: Data(field.value.utf8)))
            }
        }
    }

    /// Whether Python's email parser reads the parameters of a `Content-Disposition` as written.
    /// It follows RFC 822/2047, not WHATWG HTML (which RFC 7578 and browsers follow): `\` escapes
    /// the next character (a name ending in `\` swallows the closing quote and the `filename`
    /// after it) and `=?…?=` is an encoded word. Such headers are checked raw, byte for byte, only.
    private static func pythonReadsParametersAsWritten(_ contentDisposition: String) -> Bool {
        let scalars = Array(contentDisposition.unicodeScalars)
        return !scalars.contains("\\") && !zip(scalars, scalars.dropFirst()).contains { $0 == "=" && $1 == "?" }
    }

    private static func comparePythonMultipart(_ result: [String: Any], _ expected: [ExpectedPart]) -> String? {
        guard result["multipart"] as? Bool == true else { return "not read as multipart: \(result)" }
        if let defects = result["defects"] as? [String], !defects.isEmpty { return "defects \(defects)" }
        guard let parts = result["parts"] as? [[String: Any]], parts.count == expected.count else {
            return "\((result["parts"] as? [Any])?.count ?? -1) parts, expected \(expected.count)"
        }
        for (index, (part, expectedPart)) in zip(parts, expected).enumerated() {
            let label = "part #\(index)"
            if let defects = part["defects"] as? [String], !defects.isEmpty { return "\(label): defects \(defects)" }
            // The raw headers: exactly the ones written (a parser drops spaces after the colon).
            var expectedHeaders = [["Content-Disposition", expectedPart.contentDisposition]]
            if let contentType = expectedPart.contentType {
                expectedHeaders.append(["Content-Type", String(contentType.drop { $0 == " " || $0 == "\t" })])
            }
            let headers = (part["headers"] as? [[String]] ?? []).map { $0.map { String(decoding: bytes(hex: $0), as: UTF8.self) } }
            if headers.map({ $0.map { Array($0.unicodeScalars) } }) != expectedHeaders.map({ $0.map { Array($0.unicodeScalars) } }) {
                return "\(label): headers \(headers.map { $0.map(fuzzLiteral) }), expected \(expectedHeaders.map { $0.map(fuzzLiteral) })"
            }
            guard part["payload"] as? String == hex(expectedPart.content) else {
                return "\(label): content \(fuzzBytes(bytes(hex: part["payload"] as? String ?? ""))), expected \(fuzzBytes(expectedPart.content))"
            }
            // The parameters as Python reads them: escaped, never unescaped (%22 stays %22).
            guard pythonReadsParametersAsWritten(expectedPart.contentDisposition) else { continue }
            let name = FuzzReference.headerEscaped(expectedPart.name)
            if part["name"] as? String != hex(name.utf8) {
                return "\(label): name \(fuzzBytes(bytes(hex: part["name"] as? String ?? ""))), expected \(fuzzLiteral(name))"
            }
            if let fileName = expectedPart.fileName.map(FuzzReference.headerEscaped) {
                if part["filename"] as? String != hex(fileName.utf8) {
                    return "\(label): filename \(fuzzBytes(bytes(hex: part["filename"] as? String ?? ""))), expected \(fuzzLiteral(fileName))"
                }
            } else if !(part["filename"] is NSNull) {
                return "\(label): filename \(part["filename"] ?? "missing"), expected none"
            }
        }
        return nil
    }

    // MARK: Hex

    private static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let digits = Array("0123456789abcdef".unicodeScalars)
        var result = String.UnicodeScalarView()
        for byte in bytes {
            result.append(digits[Int(byte >> 4)])
            result.append(digits[Int(byte & 0x0F)])
        }
        return String(result)
    }

    private static func hex64(_ value: UInt64) -> String {
        hex((0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (UInt64($0) * 8)) })
    }

    private static func bytes(hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var high: UInt8?
        for scalar in hex.unicodeScalars {
            guard let digit = UInt8(String(scalar), radix: 16) else { continue }
            if let value = high {
                result.append(value << 4 | digit)
                high = nil
            } else {
                high = digit
            }
        }
        return result
    }
}

/// A reference check that failed while a case was being built.
struct FuzzMismatch: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Collects failures so that a broken encoder reports a few readable cases, not thousands.
struct FuzzLog {
    private(set) var failures: [String] = []
    private(set) var failureCount = 0

    mutating func fail(_ message: String) {
        failureCount += 1
        if failures.count < 8 { failures.append(message) }
    }

    func report(file: StaticString = #filePath, line: UInt = #line) {
        for failure in failures { XCTFail(failure, file: file, line: line) }
        if failureCount > failures.count {
            XCTFail("… and \(failureCount - failures.count) more failing cases", file: file, line: line)
        }
    }
}

/// The fuzz tests again with every struct and class read through `Mirror`.
final class EncodingFuzzMirrorTests: EncodingFuzzTests {
    override func invokeTest() { onMirrorPath { super.invokeTest() } }
    func testRunsOnTheMirrorPath() { XCTAssertTrue(TypeLayout.forcesMirror) }
}
