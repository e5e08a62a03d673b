import Foundation

/// Parses encoded cases with Python's standard library, a parser written independently of
/// Foundation and Courier: one `python3` process per test, every case a JSON line on stdin,
/// one JSON line per case on stdout. Strings come back as hex of their UTF-8 bytes, so nothing
/// (normalization, escaping, NUL) can change them on the way back.
enum FuzzPython {
    /// One case to parse: `kind` is `form`, `json` or `multipart`.
    struct Request {
        let kind: String
        let data: Data
        var boundary: String = ""
    }

    enum Failure: Error, CustomStringConvertible {
        case notFound
        case failed(status: Int32, stderr: String)
        case badOutput(String)

        var description: String {
            switch self {
            case .notFound: "python3 is not on PATH; the fuzz tests need it as an independent parser"
            case .failed(let status, let stderr): "python3 exited with status \(status): \(stderr)"
            case .badOutput(let detail): "python3 printed something unexpected: \(detail)"
            }
        }
    }

    /// The parser. Per case it prints `{"ok": result}` or `{"error": "..."}`:
    /// - form: `urllib.parse.parse_qsl(keep_blank_values=True, strict_parsing=True, errors='strict')`,
    ///   which reads `+` as a space (a literal `+` must be `%2B`), as `[[hexName, hexValue], …]`;
    /// - json: `json.loads` with the raw text of every number kept, as a tagged tree:
    ///   `{"s": hex}`, `{"t": bool}`, `{"z": 0}` for null, `{"i"|"d": token, "bits": hex of float(token)}`,
    ///   `{"a": [...]}`, `{"o": [[hexKey, value], ...]}` in document order; NaN/Infinity tokens are rejected;
    /// - multipart: `email.parser.BytesParser(policy=email.policy.HTTP)` after a `Content-Type:
    ///   multipart/form-data; boundary=…` header, as the raw headers (`raw_items()`), the `name`
    ///   and `filename` parameters of `Content-Disposition` as `email.headerregistry` reads them,
    ///   the payload bytes (`get_payload(decode=True)`) and the defects of every part.
    static let program = #"""
import base64, email.parser, email.policy, json, struct, sys
from urllib.parse import parse_qsl

class Num:
    def __init__(self, kind, token):
        self.kind, self.token = kind, token

class Obj:
    def __init__(self, pairs):
        self.pairs = pairs

def hx(text):
    return text.encode('utf-8', 'surrogateescape').hex()

def reject_constant(name):
    raise ValueError('non-standard JSON constant ' + name)

def canon(value):
    if isinstance(value, Num):
        return {value.kind: value.token, 'bits': struct.pack('>d', float(value.token)).hex()}
    if isinstance(value, Obj):
        return {'o': [[hx(key), canon(item)] for key, item in value.pairs]}
    if isinstance(value, list):
        return {'a': [canon(item) for item in value]}
    if isinstance(value, str):
        return {'s': hx(value)}
    if value is True or value is False:
        return {'t': value}
    if value is None:
        return {'z': 0}
    raise TypeError('unexpected JSON value %r' % (value,))

def parse_json(data):
    text = data.decode('utf-8', 'strict')
    return canon(json.loads(text, parse_int=lambda t: Num('i', t), parse_float=lambda t: Num('d', t),
                            parse_constant=reject_constant, object_pairs_hook=Obj))

def parse_form(data):
    text = data.decode('ascii', 'strict')
    pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=True, encoding='utf-8', errors='strict')
    return [[hx(name), hx(value)] for name, value in pairs]

def disposition_params(part):
    # The Content-Disposition header as email.headerregistry parses it (quoted strings unquoted,
    # RFC 2231 and RFC 2047 decoded), parsed once rather than once per get_param call.
    header = part['content-disposition']
    params = {} if header is None else header.params
    return {name: None if params.get(name) is None else hx(params[name]) for name in ('name', 'filename')}

def parse_multipart(data, boundary):
    head = b'Content-Type: multipart/form-data; boundary=' + boundary.encode('ascii') + b'\r\n\r\n'
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + data)
    parts = []
    if message.is_multipart():
        for part in message.iter_parts():
            payload = part.get_payload(decode=True)
            params = disposition_params(part)
            parts.append({
                'headers': [[hx(name), hx(value)] for name, value in part.raw_items()],
                'name': params['name'],
                'filename': params['filename'],
                'payload': None if payload is None else payload.hex(),
                'defects': [repr(defect) for defect in part.defects],
            })
    return {'multipart': message.is_multipart(), 'defects': [repr(defect) for defect in message.defects], 'parts': parts}

out = sys.stdout
for line in sys.stdin.buffer:
    request = json.loads(line)
    try:
        data = base64.b64decode(request['data'], validate=True)
        kind = request['kind']
        if kind == 'form':
            result = parse_form(data)
        elif kind == 'json':
            result = parse_json(data)
        elif kind == 'multipart':
            result = parse_multipart(data, request['boundary'])
        else:
            raise ValueError('unknown kind ' + kind)
        out.write(json.dumps({'ok': result}, ensure_ascii=True) + '\n')
    except Exception as error:
        out.write(json.dumps({'error': '%s: %s' % (type(error).__name__, error)}, ensure_ascii=True) + '\n')
out.flush()
"""#

    /// Runs one `python3` over every request; the answers are in request order.
    static func parse(_ requests: [Request]) throws -> [[String: Any]] {
        guard let python = findPython() else { throw Failure.notFound }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-fuzz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        // Files rather than pipes: nothing can fill up and block either side.
        let input = directory.appendingPathComponent("in.jsonl")
        let output = directory.appendingPathComponent("out.jsonl")
        let errors = directory.appendingPathComponent("err.txt")
        var lines = Data()
        for request in requests {
            let object: [String: String] = ["kind": request.kind, "data": request.data.base64EncodedString(), "boundary": request.boundary]
            lines.append(try JSONSerialization.data(withJSONObject: object))
            lines.append(UInt8(ascii: "\n"))
        }
        try lines.write(to: input)
        try Data().write(to: output)
        try Data().write(to: errors)

        let process = Process()
        process.executableURL = python
        process.arguments = ["-I", "-c", program]
        process.environment = ["PYTHONIOENCODING": "utf-8", "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        let stdin = try FileHandle(forReadingFrom: input)
        let stdout = try FileHandle(forWritingTo: output)
        let stderr = try FileHandle(forWritingTo: errors)
        defer {
            try? stdin.close()
            try? stdout.close()
            try? stderr.close()
        }
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        let start = Date()
        try process.run()
        process.waitUntilExit()
        print("python3 parsed \(requests.count) cases in \(String(format: "%.2f", Date().timeIntervalSince(start))) s")

        guard process.terminationStatus == 0 else {
            throw Failure.failed(status: process.terminationStatus, stderr: String(decoding: try Data(contentsOf: errors), as: UTF8.self))
        }
        let answers = try Data(contentsOf: output).split(separator: UInt8(ascii: "\n")).map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
                throw Failure.badOutput(String(decoding: line, as: UTF8.self))
            }
            return object
        }
        guard answers.count == requests.count else {
            throw Failure.badOutput("\(answers.count) answers to \(requests.count) requests; stderr: \(String(decoding: try Data(contentsOf: errors), as: UTF8.self))")
        }
        return answers
    }

    private static func findPython() -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("python3")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }
}
