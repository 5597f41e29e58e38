import Foundation
import ObjectGraph
import Readers

extension ModelInference {
    /// What was learned about one column.
    package struct Column {
        package let source: String
        package var values = 0
        package var nulls = 0
        package var integer = true, decimal = true, double = true, boolean = true, date = true, uuid = true
        /// Whether every date seen was a day alone (`2024-01-31`): a calendar date, not a timestamp.
        package var dateOnly = true
        /// The spellings of the dates seen (`iso8601`, `dd.MM.yyyy`, … and `slashed`), and whether
        /// every slashed one reads day first, and month first.
        package var dateSpellings: Set<String> = []
        package var dayFirst = true, monthFirst = true
        /// The digits after the point of the decimals seen while every value has as many (`nil`
        /// before the first value, `-1` once two differ); the declared scale of `NUMERIC(10,2)`.
        package var fractionDigits: Int?
        package var declaredScale: Int?
        /// The widest fraction seen.
        package var maxFractionDigits = 0
        /// The values seen and the line each came at, while they are all different (for key
        /// detection); `nil` once a value repeats or the column is not a key candidate.
        package var distinct: DistinctValues?
        /// Why a key candidate is not a key: the first value it repeats, the first it lacks, or both.
        package var flaws: [KeyFlaw] = []
        /// Whether the column was a key candidate from its first value on (its name, its values).
        private let isKeyCandidate: Bool
        /// For a `<name>_id` column of a SQL table: its different values, so that a reference guessed
        /// from the name is made only when every value is a key of its destination.
        package var references: Set<DistinctValues.Key>?

        package enum KeyFlaw: Equatable {
            /// A value at `line` repeats the one at `first`.
            case repeats(first: Int, line: Int)
            /// No value at `line`.
            case empty(line: Int)
        }
        /// The SQL affinity of the declared type, when the input declares one.
        package var affinity: String?
        /// The type as the input declares it (empty when it declares none).
        package var declaredTypeName = ""
        /// Whether the declared type names BLOB.
        package var declaresBlob = false
        /// Values that were SQL BLOBs.
        package var blobs = 0
        /// For a column of a SQL table: whether the table requires a value (NOT NULL, or part of the
        /// primary key); `nil` for inputs that declare nothing.
        package var declaredRequired: Bool?

        /// Whether the attribute is required: what a SQL table declares (and no NULL seen, for a
        /// key SQLite lets hold one); else whether every record had a value.
        package var isRequired: Bool {
            if let declaredRequired { return declaredRequired && nulls == 0 }
            return nulls == 0 && values > 0
        }

        init(source: String, keyCandidate: Bool, declaredType: String? = nil) {
            self.source = source
            distinct = keyCandidate ? DistinctValues() : nil
            isKeyCandidate = keyCandidate
            affinity = declaredType.map(TableSchema.affinity(of:))
            declaredTypeName = declaredType ?? ""
            declaresBlob = declaredType?.uppercased().contains("BLOB") == true
            declaredScale = declaredType.flatMap(Self.declaredScale)
            if declaredType != nil, source.lowercased().hasSuffix("_id") { references = [] }
        }

        /// The scale of `NUMERIC(10,2)`, `DECIMAL(12, 4)`: the number after the comma.
        static func declaredScale(_ type: String) -> Int? {
            guard let open = type.firstIndex(of: "("), let close = type.lastIndex(of: ")"), open < close else {
                return nil
            }
            let parts = type[type.index(after: open)..<close].split(separator: ",")
            guard parts.count == 2, let scale = Int(parts[1].trimmingCharacters(in: .whitespaces)),
                (0...38).contains(scale)
            else { return nil }
            return scale
        }

        /// The scale a decimal attribute of the column declares: the source's declared one when every
        /// value fits it, else the fraction every value was written with (`19.99`, `2684.00`).
        package var scale: Int? {
            guard type == .decimal else { return nil }
            if let declaredScale { return maxFractionDigits <= declaredScale ? declaredScale : nil }
            guard let fractionDigits, fractionDigits > 0 else { return nil }
            return fractionDigits
        }

        /// Takes a value of the column, from the record at `line`.
        /// - Parameters:
        ///   - isString: the input wrote the value as a string (JSON's `"8001"`): the column stays
        ///     text, a date or a UUID (JSON writes those as strings), never a number or a boolean.
        ///   - isTyped: the input wrote a number or a word (JSON's `8001`, `true`): no date or UUID.
        mutating func observe(
            _ text: String?, isBlob: Bool = false, isString: Bool = false, isTyped: Bool = false, line: Int = 0
        ) {
            // A NUMERIC column's BLOB of decimal digits is a decimal a store kept exactly that way.
            if isBlob, affinity == "NUMERIC", let text, let bytes = SQLValueText.bytes(fromHex: text),
                case let digits = String(decoding: bytes, as: UTF8.self), Self.isPlainDecimal(digits)
            {
                return observe(digits, line: line)
            }
            if isBlob, text != nil {
                values += 1
                blobs += 1
                distinct = nil
                return
            }
            guard let text, !text.isEmpty else {
                nulls += 1
                if isKeyCandidate, blobs == 0, nulls == 1 { flaws.append(.empty(line: line)) }
                return
            }
            values += 1
            references?.insert(DistinctValues.Key(text))
            if isString {
                (integer, decimal, double, boolean) = (false, false, false, false)
            } else if isTyped {
                (date, uuid) = (false, false)
            }
            if integer || decimal || double { observeNumber(text) }
            if boolean, !(4...5).contains(text.utf8.count) || !Self.booleans.contains(text) { boolean = false }
            if date { observeDate(text) }
            // A UUID is 36 characters: a long text is not copied to be tried as one.
            if uuid, text.utf8.count != 36 || UUID(uuidString: text) == nil { uuid = false }
            if distinct != nil, let first = distinct!.insert(text, line: line) {
                distinct = nil
                flaws.append(.repeats(first: first, line: line))
            }
        }

        /// Takes the value as a number, in one pass over its bytes. Numbers only when the text is the
        /// number's own spelling: `007`, `+5` or `0123.5` stay text (an identifier, a phone number), so
        /// storing the value loses nothing.
        private mutating func observeNumber(_ text: String) {
            var text = text
            let shape = text.withUTF8 { NumberShape($0) }
            if integer, shape.leadingZero || !shape.isCanonicalInteger || shape.digits > 18 && Int64(text) == nil {
                integer = false
            }
            if decimal, shape.leadingZero || !shape.isPlainDecimal || text == "-0" { decimal = false }
            if decimal {
                let digits = shape.fractionDigits
                if digits > 0 { hasFraction = true }
                maxFractionDigits = max(maxFractionDigits, digits)
                fractionDigits = fractionDigits.map { $0 == digits ? $0 : -1 } ?? digits
            }
            guard double else { return }
            if shape.leadingZero || !shape.hasNumberCharactersOnly {
                double = false
            } else if shape.isPlainDecimal, shape.digits <= 15, shape.hasDigitsAroundPoint {
                // Fifteen digits or fewer, a point between digits if any: a finite double, every digit kept.
            } else if !(Double(text)?.isFinite ?? false) || Self.losesDigits(asDouble: text) {
                double = false
            }
        }

        /// Whether a double would not keep the value of `text` (`12345678901234567890123` is not
        /// `1.2345678901234568e22`); numbers of up to 15 significant digits always fit.
        static func losesDigits(asDouble text: String) -> Bool {
            let mantissa = text.utf8.prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
            guard mantissa.filter({ $0 >= 48 && $0 <= 57 }).count > 15, let value = Double(text),
                let exact = Decimal(string: text), let kept = Decimal(string: "\(value)")
            else { return false }
            return exact != kept
        }

        static let booleans: Set<String> = ["true", "false", "TRUE", "FALSE", "True", "False"]

        static func isPlainDecimal(_ text: String) -> Bool {
            var digits = 0, dots = 0
            for (i, c) in text.utf8.enumerated() {
                if c >= 48 && c <= 57 {
                    digits += 1
                } else if c == UInt8(ascii: ".") {
                    dots += 1
                } else if !(i == 0 && c == UInt8(ascii: "-")) {
                    return false
                }
            }
            return digits > 0 && dots <= 1 && digits <= 38
        }

        /// A date exactly as imports read dates by default (ISO 8601 with `T` and a zone, or a bare
        /// day): what inference calls a date is what the import then takes.
        static func isISODate(_ text: String) -> Bool {
            DateText.parseISO8601(text) != nil
        }

        /// The day spellings besides ISO 8601 that inference recognises, as pipeline patterns; a
        /// column may mix them with each other and with ISO 8601 (`date: [dd.MM.yyyy, iso8601]`).
        static let dayPatterns = ["dd.MM.yyyy", "yyyy/MM/dd", "dd/MM/yyyy", "MM/dd/yyyy"].map {
            (pattern: $0, compiled: DatePattern($0)!)
        }

        /// Takes a value of a column that has held dates only: which spellings it is in (a day
        /// written with slashes may read both day first and month first).
        private mutating func observeDate(_ text: String) {
            if Self.isISODate(text) {
                dateSpellings.insert("iso8601")
                if text.utf8.count != 10 { dateOnly = false }
                return
            }
            let reads = Self.dayPatterns.filter { $0.compiled.date(from: text) != nil }.map(\.pattern)
            guard let first = reads.first else {
                date = false
                return
            }
            if first == "dd/MM/yyyy" || first == "MM/dd/yyyy" {
                dateSpellings.insert("slashed")
                if !reads.contains("dd/MM/yyyy") { dayFirst = false }
                if !reads.contains("MM/dd/yyyy") { monthFirst = false }
            } else {
                dateSpellings.insert(first)
            }
        }

        /// The date patterns a pipeline reads the column's values with: none for ISO 8601 alone (the
        /// default); `nil` when the slashed days read both day first and month first (`01/02/2024`
        /// only) or neither way for all, so the column is not taken for dates.
        package var datePatterns: [String]? {
            var patterns = Self.dayPatterns.map(\.pattern).filter { dateSpellings.contains($0) }
            if dateSpellings.contains("slashed") {
                guard dayFirst != monthFirst else { return nil }
                patterns.append(dayFirst ? "dd/MM/yyyy" : "MM/dd/yyyy")
            }
            if patterns.isEmpty { return [] }
            return dateSpellings.contains("iso8601") ? patterns + ["iso8601"] : patterns
        }

        /// The type for the values seen, within what the declared type says: BLOBs are binary,
        /// a TEXT column stays text (`'007'`, `'2023-09-01'` as written), a REAL one double, an
        /// INTEGER one holding integers beyond 64 bits decimal.
        package var type: AttributeType {
            guard values > 0 else { return declaredType }
            if blobs > 0 { return blobs == values ? .binary : .string }
            switch affinity {
            case "TEXT": return .string
            case "REAL" where double: return .double
            case "INTEGER" where !integer && decimal && !hasFraction: return .decimal
            default: break
            }
            if integer { return .integer64 }
            if boolean { return .boolean }
            if decimal { return .decimal }
            if double { return .double }
            if date, datePatterns != nil { return dateOnly ? .calendarDate : .date }
            if uuid { return .uuid }
            return .string
        }

        /// The type a column without values has: what its declared type says (`DATE` a calendar
        /// date, `DATETIME`/`TIMESTAMP` a date, then by affinity), text when it declares none.
        private var declaredType: AttributeType {
            if declaresBlob { return .binary }
            let declared = declaredTypeName.uppercased()
            if declared.contains("DATETIME") || declared.contains("TIMESTAMP") { return .date }
            if declared.contains("DATE") { return .calendarDate }
            switch affinity {
            case "INTEGER": return declared.contains("BOOL") ? .boolean : .integer64
            case "REAL": return .double
            case "NUMERIC": return declared.contains("BOOL") ? .boolean : .decimal
            default: return .string
            }
        }

        package var isUnique: Bool { distinct != nil && values > 0 && nulls == 0 }

        /// Whether some decimal value seen has a point (`decimal` then holds fractions, not only
        /// integers too long for 64 bits).
        package var hasFraction = false
    }
}

/// What one pass over a value's bytes tells of it as a number (`ModelInference.Column.observe`).
struct NumberShape {
    /// Digits anywhere in the value.
    var digits = 0
    /// Bytes after the first point.
    var fractionDigits = 0
    /// `007`, `-01.5`: a zero before other digits of the whole part (after any signs).
    var leadingZero = false
    /// Digits with at most one point and a minus only in front, up to 38 digits (`-12.50`).
    var isPlainDecimal = false
    /// An integer as `String(Int64)` writes one: `0`, `-12`, never `+12`, `012` or `-0`.
    var isCanonicalInteger = false
    /// Only digits, points, signs and exponent letters.
    var hasNumberCharactersOnly = true
    /// Whether a point, if any, has a digit on both sides (`1.5`, not `.5` or `5.`).
    var hasDigitsAroundPoint = true

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }
        let count = bytes.count
        var signs = 0
        while signs < count, bytes[signs] == UInt8(ascii: "-") || bytes[signs] == UInt8(ascii: "+") { signs += 1 }
        leadingZero = signs + 1 < count && bytes[signs] == UInt8(ascii: "0") && isDigit(bytes[signs + 1])
        var plain = true, firstDot = -1, dots = 0
        for index in 0..<count {
            let byte = bytes[index]
            if isDigit(byte) {
                digits += 1
            } else if byte == UInt8(ascii: ".") {
                dots += 1
                if firstDot < 0 { firstDot = index }
            } else {
                if index != 0 || byte != UInt8(ascii: "-") { plain = false }
                if !"+-eE".utf8.contains(byte) { hasNumberCharactersOnly = false }
            }
        }
        isPlainDecimal = plain && digits > 0 && dots <= 1 && digits <= 38
        fractionDigits = firstDot >= 0 ? count - firstDot - 1 : 0
        hasDigitsAroundPoint =
            firstDot < 0
            || firstDot > 0 && isDigit(bytes[firstDot - 1]) && firstDot + 1 < count
                && isDigit(bytes[firstDot + 1])
        let start = count > 0 && bytes[0] == UInt8(ascii: "-") ? 1 : 0
        isCanonicalInteger =
            plain && dots == 0 && digits > 0 && digits == count - start
            && (bytes[start] != UInt8(ascii: "0") || digits == 1) && !(start == 1 && bytes[1] == UInt8(ascii: "0"))
    }
}
