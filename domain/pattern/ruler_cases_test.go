package pattern

// Cases ported from Amazon's event-ruler (github.com/aws/event-ruler, files under src/test/software/amazon/event/
// ruler/ and src/test/data/) and from quamina (github.com/timbray/quamina), for the edges where this package
// follows event-ruler: equals-ignore-case with Unicode case pairs, scalars beside objects in one array, and the
// patterns event-ruler refuses. Each group names the test (or, where event-ruler has none, the source file) its
// cases come from. The differences this package keeps are at the end, each with its reason.

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

type rulerCase struct {
	source  string // where the case comes from
	pattern string
	match   []string // events that match
	noMatch []string // events that do not
}

// runRulerCases checks every event of every case with Pattern.Match, Explain and one Matcher that holds all the
// cases' patterns (so that the index sees operands that share case keys).
func runRulerCases(t *testing.T, cases []rulerCase) {
	t.Helper()
	m := NewMatcher()
	pats := make([]*Pattern, len(cases))
	for i, c := range cases {
		p, err := Compile([]byte(c.pattern))
		if err != nil {
			t.Fatalf("%s: Compile(%s): %v", c.source, c.pattern, err)
		}
		pats[i] = p
		if err := m.Add(fmt.Sprint(i), p); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cases {
		for _, want := range []bool{true, false} {
			events := c.match
			if !want {
				events = c.noMatch
			}
			for _, ev := range events {
				single, err := pats[i].Match([]byte(ev))
				if err != nil {
					t.Fatalf("%s: Match(%s): %v", c.source, ev, err)
				}
				ids, err := m.Match([]byte(ev))
				if err != nil {
					t.Fatal(err)
				}
				x, err := Explain(pats[i], []byte(ev))
				if err != nil {
					t.Fatal(err)
				}
				if inMatcher := slices.Contains(ids, fmt.Sprint(i)); single != want || inMatcher != want || (x == nil) != want {
					explained := "nil"
					if x != nil {
						explained = x.Path + ": " + x.Reason
					}
					t.Errorf("%s\npattern %s\nevent   %s\nPattern.Match %v, Matcher %v, Explain %s; want match %v",
						c.source, c.pattern, ev, single, inMatcher, explained, want)
				}
			}
		}
	}
}

// ignoreCase makes a case of the operand under op ("equals-ignore-case", "prefix", "suffix" or "anything-but")
// on the field "v", with events whose "v" holds each value.
func ignoreCase(source, op, operand string, match, noMatch []string) rulerCase {
	var alt any = map[string]any{"equals-ignore-case": operand}
	if op != "equals-ignore-case" {
		alt = map[string]any{op: alt}
	}
	p, _ := json.Marshal(map[string]any{"v": []any{alt}})
	events := func(values []string) []string {
		var out []string
		for _, v := range values {
			e, _ := json.Marshal(map[string]string{"v": v})
			out = append(out, string(e))
		}
		return out
	}
	return rulerCase{source: source, pattern: string(p), match: events(match), noMatch: events(noMatch)}
}

// caseMixes lists every string that takes, at each position, the character of a or of b.
func caseMixes(a, b string) []string {
	ra, rb := []rune(a), []rune(b)
	out := []string{""}
	for i := range ra {
		var next []string
		for _, s := range out {
			next = append(next, s+string(ra[i]), s+string(rb[i]))
		}
		out = next
	}
	return out
}

func TestRulerIgnoreCase(t *testing.T) {
	t.Parallel()
	const greek = "\u03b0\u0240\u0250\u0390\u03b0\u1fc6\u212a" // ΰɀɐΐΰῆ and the Kelvin sign
	greekMatches := []string{
		"\u03a5\u0308\u0301\u0240\u2c6f\u0390\u03a5\u0308\u0301\u0397\u0342k",
		"\u03b0\u2c7f\u0250\u0399\u0308\u0301\u03b0\u1fc6\u212a",
		"\u03a5\u0308\u0301\u2c7f\u2c6f\u0399\u0308\u0301\u03a5\u0308\u0301\u1fc6k",
		"\u03b0\u0240\u0250\u0390\u03b0\u0397\u0342\u212a",
	}
	greekNoMatches := []string{"",
		"\u03a5\u0308\u0301\u023f\u2c6f\u0390\u03a5\u0308\u0301\u0397\u0342k", // ȿ is not a case of ɀ
		"\u03b0\u2c7e\u0250\u0399\u0308\u0301\u03b0\u1fc6\u212a",              // nor Ȿ
	}
	const symbols = "1#$^sS\u6211\u0150aBc" // 1#$^sS我ŐaBc
	symbolNoMatches := []string{"", "2#$^sS\u6211\u0150aBc", "1#%^sS\u6211\u0150aBc", "1#$^sS\u5927\u0150aBc",
		"1#$^sS\u6211\u014faBc"} // 大 for 我, ŏ (not a case of Ő)
	runRulerCases(t, []rulerCase{
		// event-ruler ByteMachineTest
		ignoreCase("ByteMachineTest.testEqualsIgnoreCasePattern", "equals-ignore-case", "jAVa",
			[]string{"java", "JAVA", "Java", "jAvA", "jAVa", "JaVa"},
			[]string{"JAV", "jav", "ava", "AVA", "JAVAx", "javax", "xJAVA", "xjava"}),
		ignoreCase("ByteMachineTest.testEqualsIgnoreCasePatternNonLetterCharacters", "equals-ignore-case", symbols,
			[]string{symbols, "1#$^Ss\u6211\u0150AbC"}, symbolNoMatches),
		ignoreCase("ByteMachineTest.testEqualsIgnoreCaseLowerCaseCharacterWithDifferentByteLengthForUpperCase",
			"equals-ignore-case", "12\u2c6534", []string{"12\u2c6534", "12\u023a34"}, []string{"", "12a34", "12A34"}),
		ignoreCase("ByteMachineTest.testEqualsIgnoreCaseUpperCaseCharacterWithDifferentByteLengthForLowerCase",
			"equals-ignore-case", "12\u023a34", []string{"12\u2c6534", "12\u023a34"}, []string{"", "12a34", "12A34"}),
		ignoreCase("ByteMachineTest.testEqualsIgnoreCaseManyCharactersWithDifferentByteLengthForLowerCaseAndUpperCase",
			"equals-ignore-case", greek, greekMatches, greekNoMatches),
		ignoreCase("ByteMachineTest.testPrefixEqualsIgnoreCasePattern", "prefix", "jAVa",
			[]string{"java", "JAVA", "Java", "jAvA", "jAVa", "JaVa", "JAVAx", "javax", "JaVaaaaaaa"},
			[]string{"", "JAV", "jav", "ava", "AVA", "xJAVA", "xjava", "jAV", "AVa"}),
		ignoreCase("ByteMachineTest.testPrefixEqualsIgnoreCasePatternNonLetterCharacters", "prefix", symbols,
			[]string{symbols + "d", "1#$^Ss\u6211\u0150AbCaaaaa", "1#$^Ss\u6211\u0150AbC\u6211"}, symbolNoMatches),
		ignoreCase("ByteMachineTest.testPrefixEqualsIgnoreCaseLowerCaseCharacterWithDifferentByteLengthForUpperCase",
			"prefix", "12\u2c6534", []string{"12\u2c6534", "12\u023a34", "12\u2c653478", "12\u023a34aa", "12\u023a34\u023a\u023a"},
			[]string{"", "12a34", "12A34"}),
		ignoreCase("ByteMachineTest.testPrefixEqualsIgnoreCaseManyCharactersWithDifferentByteLengthForLowerCaseAndUpperCase",
			"prefix", greek, append(slices.Clone(greekMatches),
				"\u03a5\u0308\u0301\u0240\u2c6f\u0390\u03a5\u0308\u0301\u0397\u0342kA\u0308\u0301\u0240\u2c6f\u0390\u03a5\u0308\u0301\u0397\u0342",
				"\u03b0\u2c7f\u0250\u0399\u0308\u0301\u03b0\u1fc6\u212aa\u0308\u0301\u0240\u2c6f\u0390\u03a5\u0308\u0301\u0397\u0342"),
			greekNoMatches),
		ignoreCase("ByteMachineTest.testSuffixEqualsIgnoreCasePattern", "suffix", "jAVa",
			[]string{"java", "JAVA", "Java", "jAvA", "jAVa", "JaVa", "helloJAVA", "hijava", "jjjjjjJaVa"},
			[]string{"", "JAV", "jav", "ava", "AVA", "JAVAx", "javax", "jAV", "AVa"}),
		ignoreCase("ByteMachineTest.testSuffixEqualsIgnoreCasePatternNonLetterCharacters", "suffix", symbols,
			[]string{"aa" + symbols, "1111#$^Ss\u6211\u0150AbC", "\u6211\u62111#$^Ss\u6211\u0150AbC"},
			[]string{"", "1#$^sS\u6211\u0150aBd", "1#%^sS\u6211\u0150aBc", "1#$^sS\u5927\u0150aBc", "1#$^sS\u6211\u014faBc"}),
		ignoreCase("ByteMachineTest.testSuffixEqualsIgnoreCaseUpperCaseCharacterWithDifferentByteLengthForLowerCase",
			"suffix", "12\u023a34", []string{"12\u2c6534", "12\u023a34", "7812\u2c6534", "aa12\u023a34", "\u2c65\u023a12\u023a34"},
			[]string{"", "12a34", "12A34"}),
		ignoreCase("ByteMachineTest.testSuffixEqualsIgnoreCaseManyCharactersWithDifferentByteLengthForLowerCaseAndUpperCase",
			"suffix", greek, append(slices.Clone(greekMatches),
				"A\u0308\u0301\u0240\u2c6f\u0390\u03a5\u0308\u0301\u0397\u0342\u03a5\u0308\u0301\u0240\u2c6f\u0390\u03a5\u0308\u0301\u0397\u0342k",
				"a\u0308\u0301\u0240\u2c6f\u0390\u03a5\u0308\u0301\u0397\u0342\u03b0\u2c7f\u0250\u0399\u0308\u0301\u03b0\u1fc6\u212a"),
			greekNoMatches),
		// event-ruler ACMachineTest.testPrefixEqualsIgnoreCase and testSuffixEqualsIgnoreCase
		ignoreCase("ACMachineTest.testPrefixEqualsIgnoreCase", "prefix", "zoo", []string{"zOokeeper", "Zoo"}, []string{"zo", "azoo"}),
		ignoreCase("ACMachineTest.testPrefixEqualsIgnoreCase", "prefix", "child",
			[]string{"cHildlike", "chIldish", "childhood"}, []string{"chil"}),
		ignoreCase("ACMachineTest.testSuffixEqualsIgnoreCase", "suffix", "eper", []string{"zookeePer", "Gatekeeper"}, []string{"epe"}),
		ignoreCase("ACMachineTest.testSuffixEqualsIgnoreCase", "suffix", "hood",
			[]string{"hOod", "parenthOod", "brotherhood", "childhOoD"}, []string{"hoods"}),
		// event-ruler ACMachineTest.testAnythingButEqualsIgnoreCase (events 1 to 8)
		{source: "ACMachineTest.testAnythingButEqualsIgnoreCase",
			pattern: `{"a":[{"anything-but":{"equals-ignore-case":["yes","please"]}}],"b":[{"anything-but":{"equals-ignore-case":"no"}}]}`,
			match:   []string{`{"a":"value","b":"nothing"}`},
			noMatch: []string{`{"a":"YES","b":"nothing"}`, `{"a":"yEs","b":"nothing"}`, `{"a":"pLease","b":"nothing"}`,
				`{"a":"PLEASE","b":"nothing"}`, `{"a":"please","b":"nothing"}`, `{"a":"please","b":"no"}`, `{"a":"please","b":"No"}`}},
		// event-ruler EqualsIgnoreCaseParser.java: each character of the operand stands for its lower and upper case
		// as Java's String.toLowerCase and toUpperCase(Locale.ROOT) give them, one character at a time (full
		// mappings, no context), and the value is compared with those forms; event-ruler has no test of these.
		ignoreCase("EqualsIgnoreCaseParser: ß has upper case SS", "equals-ignore-case", "ß",
			[]string{"ß", "SS"}, []string{"ss", "Ss", "\u1e9e", "S"}),
		ignoreCase("EqualsIgnoreCaseParser: S is no case of ß", "equals-ignore-case", "SS",
			[]string{"ss", "SS", "sS"}, []string{"ß", "\u1e9e"}),
		ignoreCase("EqualsIgnoreCaseParser: ẞ has lower case ß", "equals-ignore-case", "\u1e9e",
			[]string{"\u1e9e", "ß"}, []string{"SS", "ss"}),
		ignoreCase("EqualsIgnoreCaseParser: forms of several lengths in a row", "equals-ignore-case", "ßs",
			[]string{"ßs", "SSS", "SSs", "ßS"}, []string{"sss", "ß"}),
		ignoreCase("EqualsIgnoreCaseParser: ß in a prefix", "prefix", "straß",
			[]string{"STRASSE", "straße"}, []string{"strasse", "STRAẞE"}),
		ignoreCase("EqualsIgnoreCaseParser: ß in a suffix", "suffix", "ß",
			[]string{"STRASS", "straß"}, []string{"strass"}),
		ignoreCase("EqualsIgnoreCaseParser: ﬃ has upper case FFI", "equals-ignore-case", "\ufb03",
			[]string{"\ufb03", "FFI"}, []string{"ffi", "Ffi"}),
		ignoreCase("EqualsIgnoreCaseParser: the Kelvin sign has lower case k", "equals-ignore-case", "\u212a",
			[]string{"\u212a", "k"}, []string{"K"}),
		ignoreCase("EqualsIgnoreCaseParser: k is not the Kelvin sign", "equals-ignore-case", "k",
			[]string{"k", "K"}, []string{"\u212a"}),
		ignoreCase("EqualsIgnoreCaseParser: long s has upper case S", "equals-ignore-case", "\u017f",
			[]string{"\u017f", "S"}, []string{"s"}),
		ignoreCase("EqualsIgnoreCaseParser: s is not long s", "equals-ignore-case", "s",
			[]string{"s", "S"}, []string{"\u017f"}),
		ignoreCase("EqualsIgnoreCaseParser: Σ alone has lower case σ", "equals-ignore-case", "ΟΔΟΣ",
			[]string{"οδοσ", "ΟΔΟΣ"}, []string{"οδος"}),
		ignoreCase("EqualsIgnoreCaseParser: final sigma", "equals-ignore-case", "οδος",
			[]string{"οδος", "ΟΔΟΣ"}, []string{"οδοσ"}),
		ignoreCase("EqualsIgnoreCaseParser: dotless ı has upper case I", "equals-ignore-case", "\u0131",
			[]string{"\u0131", "I"}, []string{"i", "\u0130"}),
		ignoreCase("EqualsIgnoreCaseParser: I has lower case i", "equals-ignore-case", "I",
			[]string{"i", "I"}, []string{"\u0131", "\u0130"}),
		ignoreCase("EqualsIgnoreCaseParser: İ has lower case i and a combining dot", "equals-ignore-case", "\u0130",
			[]string{"\u0130", "i\u0307"}, []string{"i", "I", "\u0131"}),
		ignoreCase("EqualsIgnoreCaseParser: anything-but with ß", "anything-but", "ß",
			[]string{"ss", "S"}, []string{"ß", "SS"}),
		// quamina monocase_test.go
		ignoreCase("quamina TestABCDMono", "equals-ignore-case", "abcd", caseMixes("abcd", "ABCD"), []string{"abc", "abcde"}),
		ignoreCase("quamina TestIntermittentMono", "equals-ignore-case", "a,8899bc d",
			caseMixes("a,8899bc d", "A,8899BC D"), []string{"a,8899bc", "a.8899bc d"}),
		ignoreCase("quamina TestEqualsIgnoreCaseMatching", "equals-ignore-case", "aBc", []string{"abc", "AbC"}, []string{"aabc"}),
		ignoreCase("quamina TestEqualsIgnoreCaseMatching", "equals-ignore-case", "XyZ", []string{"XYZ"}, []string{"xyzz", "ABCXYZ"}),
		ignoreCase("quamina TestEqualsIgnoreCaseMatching", "equals-ignore-case", "xyZ", []string{"XYZ"}, []string{"xyzz", "ABCXYZ"}),
	})
}

func TestRulerArrays(t *testing.T) {
	t.Parallel()
	const hetero = `{"lines":[{"intensities":[[0.5]],"points":[[[483.3474497412421,287.48116291799363,{"pp":"index0"}],
		[{"pp":"index1"},489.9999497412421,299.99996291799363]]]}]}`
	const intensities = `{"lines":[{"intensities":[[0.5]],"points":[[[{"pp":"index0"},483.3474497412421,287.48116291799363],
		[{"pp":"index1"},489.9999497412421,299.99996291799363]]]}]}`
	const employees = `{"employees":[{"firstName":"John","lastName":"Doe"},{"firstName":"Anna","lastName":"Smith"},
		{"firstName":"Peter","lastName":"Jones"}]}`
	const employeesNested = `{"employees":[[{"firstName":"John","lastName":"Doe"},{"firstName":"Anna","lastName":"Smith"}],
		[{"firstName":"Peter","lastName":"Jones"}]]}`
	const songs = `{"Year":1966,"Genres":[{"Pop":true},{"Classical":false}],"Songs":[
		{"Name":"Paperback Writer","Writers":[{"First":"John","Last":"Lennon"},{"First":"Paul","Last":"McCartney"}]},
		{"Name":"Paint It Black","Writers":[{"First":"Mick","Last":"Jagger"},{"First":"Keith","Last":"Richards"}]}]}`
	const bands = `{"bands":[{"name":"The Clash","members":[{"given":"Joe","surname":"Strummer","role":["guitar","vocals"]},
		{"given":"Mick","surname":"Jones","role":["guitar","vocals"]},{"given":"Paul","surname":"Simonon","role":["bass"]},
		{"given":"Topper","surname":"Headon","role":["drums"]}]},{"name":"Boris","members":[
		{"given":"Wata","role":["guitar","vocals"]},{"given":"Atsuo","role":["drums"]},{"given":"Takeshi","role":["bass","vocals"]}]}]}`
	// The key "points" twice: the number at lines.points and the object below it.
	const pointsRule = `{"lines":{"points":[287.48116291799363],"points":{"pp":["index0"]}}}`
	runRulerCases(t, []rulerCase{
		// event-ruler EventTest.WHEN_EventIsConstructed_THEN_HeterogeneousArraysAreHandled: the number is a scalar
		// element of the innermost array, so it is in none of its elements and combines with {"pp":"index0"}.
		{source: "EventTest.WHEN_EventIsConstructed_THEN_HeterogeneousArraysAreHandled", pattern: pointsRule,
			match: []string{hetero}},
		// event-ruler ACMachineTest.intensitiesACTest; the second event is that test's with the number in the
		// other element of the array of arrays, which must not combine.
		{source: "ACMachineTest.intensitiesACTest", pattern: pointsRule, match: []string{intensities},
			noMatch: []string{`{"lines":[{"points":[[[{"pp":"index0"},1],[{"pp":"index1"},287.48116291799363]]]}]}`}},
		// event-ruler README, JSON Array Matching (rulesForJSONEvent)
		{source: "README JSON Array Matching", pattern: `{"employees":{"firstName":["Anna"]}}`,
			match: []string{employees, employeesNested}},
		{source: "README JSON Array Matching", pattern: `{"employees":{"firstName":["Anna"],"lastName":["Jones"]}}`,
			noMatch: []string{employees, employeesNested}},
		// event-ruler ACMachineTest.songsACTest
		{source: "ACMachineTest.songsACTest r0", match: []string{songs},
			pattern: `{"Year":[1966],"Songs":{"Name":["Paperback Writer"],"Writers":{"First":["Paul"],"Last":["McCartney"]}}}`},
		{source: "ACMachineTest.songsACTest r1", match: []string{songs},
			pattern: `{"Genres":{"Pop":[true]},"Songs":{"Name":["Paint It Black"]}}`},
		{source: "ACMachineTest.songsACTest r2", match: []string{songs},
			pattern: `{"Year":[1966],"Songs":{"Name":["Paint It Black"]}}`},
		{source: "ACMachineTest.songsACTest f0", noMatch: []string{songs},
			pattern: `{"Year":[1966],"Songs":{"Name":["Paperback Writer"],"Writers":{"First":["Mick"]}}}`},
		{source: "ACMachineTest.songsACTest f1", noMatch: []string{songs},
			pattern: `{"Songs":{"Writers":{"First":["Mick"],"Last":["McCartney"]}}}`},
		{source: "ACMachineTest.songsACTest f2", noMatch: []string{songs},
			pattern: `{"Genres":{"Pop":[true]},"Songs":{"Writers":{"First":["Mick"],"Last":["McCartney"]}}}`},
		// quamina arrays_test.go TestArrayCorrectness: only "Wata guitar" matches
		{source: "quamina TestArrayCorrectness", pattern: `{"bands":{"members":{"given":["Mick"],"surname":["Strummer"]}}}`,
			noMatch: []string{bands}},
		{source: "quamina TestArrayCorrectness", pattern: `{"bands":{"members":{"given":["Wata"],"role":["drums"]}}}`,
			noMatch: []string{bands}},
		{source: "quamina TestArrayCorrectness", pattern: `{"bands":{"members":{"given":["Wata"],"role":["guitar"]}}}`,
			match: []string{bands}},
		// event-ruler Event.java traverseArray: a scalar element takes no membership of its array, an object or
		// array element does (quamina, whose flattener gives scalars their place, does not combine these).
		{source: "Event.traverseArray: a scalar beside an object", pattern: `{"a":["x"],"a.b":[1]}`,
			match:   []string{`{"a":["x",{"b":1}]}`, `{"a":[{"b":1},"x"]}`, `{"a":[{"b":1},{"b":2},"x"]}`},
			noMatch: []string{`{"a":[["x"],{"b":1}]}`, `{"a":[{"b":2},"x"]}`}},
		{source: "Event.traverseArray: a scalar in an inner array keeps the outer element", pattern: `{"a":{"b":["x"],"c":[1]}}`,
			match:   []string{`{"a":[{"b":["y","x"],"c":1}]}`},
			noMatch: []string{`{"a":[{"b":["x"]},{"c":1}]}`}},
		{source: "Event.traverseArray: exists:false sees a scalar of the array", pattern: `{"a":[{"exists":false}],"a.b":[1]}`,
			match:   []string{`{"a":[{"b":1},{"c":2}]}`, `{"a":[[{"b":1}],["x"]]}`},
			noMatch: []string{`{"a":["x",{"b":1}]}`}},
		// TestDottedKeyChoices' first case before this change: "x" is a scalar of the innermost array, so it is
		// consistent with {"b":2} and the field a.a exists.
		{source: "Event.traverseArray: with dotted keys", pattern: `{"a":{"a":[{"exists":false}],"a.b":[{"exists":true}]}}`,
			noMatch: []string{`{"a":[{"a":[["x",{"b":2}]],"a.b":"x"}]}`}},
	})
	for _, c := range []struct{ pattern, event string }{
		{`{"a":["x"],"a.b":[1]}`, `{"a":["x",{"b":1}]}`},
		{`{"a":[{"exists":false}],"a.b":[1]}`, `{"a":["x",{"b":1}]}`},
		{`{"a":{"a":[{"exists":false}],"a.b":[{"exists":true}]}}`, `{"a":[{"a":[["x",{"b":2}]],"a.b":"x"}]}`},
	} {
		p, err := Compile([]byte(c.pattern))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := p.Match([]byte(c.event))
		if ref, ok := refBrute([]byte(c.pattern), []byte(c.event)); !ok || ref != got {
			t.Errorf("pattern %s event %s: the brute-force reference gives %v (decided %v), Match %v", c.pattern, c.event, ref, ok, got)
		}
	}
}

func TestRulerRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		source, pattern, wantPath, wantReason string
	}{
		// event-ruler JsonRuleCompilerTest.testNumericExpressions, its bad expressions
		{"testNumericExpressions", `{"x":[{"numeric":[">",30,"<",1]}]}`, "x[0].numeric", "lower bound 30 is not below its upper bound 1"},
		{"testNumericExpressions", `{"x":[{"numeric":[">",1,"<",1]}]}`, "x[0].numeric", "range is empty"},
		{"testNumericExpressions", `{"x":[{"numeric":["=",1E-325]}]}`, "x[0].numeric[1]", "too small to tell from 0"},
		{"testNumericExpressions", `{"x":[{"numeric":["<",1E-325]}]}`, "x[0].numeric[1]", "too small to tell from 0"},
		{"testNumericExpressions", `{"x":[{"numeric":["=",1E309]}]}`, "x[0].numeric[1]", "out of range"},
		{"testNumericExpressions", `{"x":[{"numeric":["=",2.0e422]}]}`, "x[0].numeric[1]", "out of range"},
		{"testNumericExpressions", `{"x":[{"numeric":["=",true]}]}`, "x[0].numeric[1]", "numbers only"},
		{"testNumericExpressions", `{"x":[{"numeric":["=","-4e-6"]}]}`, "x[0].numeric[1]", "numbers only"},
		{"testNumericExpressions", `{"x":[{"numeric":["="]}]}`, "x[0].numeric", "takes an array"},
		{"testNumericExpressions", `{"x":[{"numeric":["<>",1,">",0]}]}`, "x[0].numeric[0]", "unsupported numeric operator"},
		{"testNumericExpressions", `{"x":[{"numeric":["==",1,">",0]}]}`, "x[0].numeric[0]", "unsupported numeric operator"},
		{"testNumericExpressions", `{"x":[{"numeric":[">",1,"<",30,false]}]}`, "x[0].numeric", "takes an array"},
		// event-ruler Range.ensureValidRange ("Bottom must be less than top"), which refuses equal bounds too
		{"Range.ensureValidRange", `{"x":[{"numeric":[">=",5,"<=",5]}]}`, "x[0].numeric", `use ["=", 5]`},
		{"Range.ensureValidRange", `{"x":[{"numeric":[">=",5,"<",5.0]}]}`, "x[0].numeric", "range is empty"},
		// event-ruler ComparableNumber.generate ("Cannot compare number"): a number that a double reads as 0
		{"ComparableNumber.generate", `{"x":[{"numeric":[">",1e-400]}]}`, "x[0].numeric[1]", "1e-400 is too small"},
		{"ComparableNumber.generate", `{"x":[{"anything-but":1e-400}]}`, "x[0].anything-but", "too small to tell from 0"},
		{"ComparableNumber.generate", `{"x":[{"anything-but":[1,-2.5e-999]}]}`, "x[0].anything-but[1]", "too small to tell from 0"},
		// event-ruler JsonRuleCompilerTest.testOrFieldCanKeepWorkingInLegacyRuleCompiler: JsonRuleCompiler refuses
		// every rule of src/test/data/normalRulesWithOrWording.json
		{"normalRulesWithOrWording.json #1", `{"$or":[{"cidr":"10.0.0.0/24"}]}`, "$or", "at least two objects"},
		{"normalRulesWithOrWording.json #2", `{"source":["aws.cloudwatch"],"$or":{"metricType":["MetricType"],"namespace":["AWS/EC2","AWS/ES"]}}`,
			"$or", "at least two objects"},
		{"normalRulesWithOrWording.json #3", `{"time":[{"prefix":"2017-10-02"}],"detail":{"$or":[{"numeric":[">",0,"<=",5]},{"cidr":"10.0.0.0/8"}]}}`,
			"detail.$or[0].numeric", `"numeric" is an operator name`},
		{"normalRulesWithOrWording.json #4", `{"detail":{"$or":[{"numeric":[">",0,"<=",5]},{"numeric":[">",10]}]}}`,
			"detail.$or[0].numeric", "cannot be a field name inside $or"},
		// event-ruler JsonRuleCompilerTest.testWrongOrRelationshipRules (src/test/data/wrongOrRelationshipRules.json)
		{"wrongOrRelationshipRules.json #1", `{"$or":[{"metricName":["CPUUtilization","ReadLatency"]}]}`, "$or", "at least two objects"},
		{"wrongOrRelationshipRules.json #2", `{"detail":{"$or":[{"source":["aws.cloudwatch"]},{"detail-type":["CloudWatch Alarm State Change"]},[{"foo":["wrong"]}]]}}`,
			"detail.$or[2]", "at least two objects"},
		// event-ruler README, The "$or" Primitive, and JsonRuleCompiler.parseObjectInsideOrRelationship, which checks
		// the names of RESERVED_FIELD_NAMES_IN_OR_RELATIONSHIP (Constants.java) at every depth inside $or
		{"README $or", `{"$or":[{"numeric":123},{"prefix":"abc"}]}`, "$or[0].numeric", "operator name"},
		{"parseObjectInsideOrRelationship", `{"$or":[{"a":{"prefix":["x"]}},{"b":["y"]}]}`, "$or[0].a.prefix", "operator name"},
		{"parseObjectInsideOrRelationship", `{"$or":[{"b":["y"]},{"$or":[{"c":[1]},{"=":[1]}]}]}`, "$or[1].$or[1].=", "operator name"},
		{"RESERVED_FIELD_NAMES_IN_OR_RELATIONSHIP", `{"d":{"$or":[{"a":[1]},{"exactly":["x"]}]}}`, "d.$or[1].exactly", "operator name"},
		{"RESERVED_FIELD_NAMES_IN_OR_RELATIONSHIP", `{"$or":[{"a":[1]},{"date-after":["x"]}]}`, "$or[1].date-after", "operator name"},
	}
	for _, tc := range cases {
		t.Run(tc.source+" "+tc.pattern, func(t *testing.T) {
			t.Parallel()
			_, err := Compile([]byte(tc.pattern))
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("want *Error, got %v", err)
			}
			if pe.Path != tc.wantPath || !strings.Contains(pe.Reason, tc.wantReason) {
				t.Fatalf("got path %q reason %q; want path %q reason containing %q", pe.Path, pe.Reason, tc.wantPath, tc.wantReason)
			}
		})
	}
}

func TestRulerAccepts(t *testing.T) {
	t.Parallel()
	var good []string
	// event-ruler JsonRuleCompilerTest.testNumericExpressions, its good expressions
	for _, op := range []string{"=", "<", ">", "<=", ">="} {
		for _, n := range []string{"3.8", "0.000033", "-4e-6", "55555", "1E-320"} {
			good = append(good, fmt.Sprintf(`{"x":[{"numeric":[%q,%s]}]}`, op, n))
		}
	}
	good = append(good, `{"x":[{"numeric":[">",0,"<",1]}]}`, `{"x":[{"numeric":[">=",0,"<",1]}]}`,
		`{"x":[{"numeric":[">",0,"<=",1]}]}`, `{"x":[{"numeric":[">=",0,"<=",1]}]}`,
		// JsonRuleCompiler.parseObject: operator names are field names outside $or
		`{"numeric":[1],"prefix":{"exists":["x"]}}`,
		// a denormal number is not 0
		`{"x":[4.9e-324]}`, `{"x":[{"anything-but":[5e-324]}]}`)
	for _, p := range good {
		if _, err := Compile([]byte(p)); err != nil {
			t.Errorf("Compile(%s): %v", p, err)
		}
	}
	runRulerCases(t, []rulerCase{
		// event-ruler JsonRuleCompilerTest.testBasicFunctionOfOrRelationshipRules
		{source: "testBasicFunctionOfOrRelationshipRules rule1",
			pattern: `{"detail":{"$or":[{"c-count":[{"numeric":[">",0,"<=",5]}]},{"d-count":[{"numeric":["<",10]}]},
				{"x-limit":[{"numeric":["=",3.018e2]}]}]}}`,
			match: []string{orEvent}, noMatch: []string{`{"detail":{"c-count":7,"d-count":10}}`}},
		{source: "testBasicFunctionOfOrRelationshipRules rule2",
			pattern: `{"detail":{"detail-type":["EC2 Instance State-change Notification"],
				"resources":["arn:aws:ec2:us-east-1:123456789012:instance/i-000000aaaaaa00000"],
				"info":{"state-status":["initializing","running"],"state-count":{"count":[100]}},
				"$or":[{"c-count":[{"numeric":[">",0,"<=",5]}]},{"d-count":[{"numeric":["<",10]}]},{"x-limit":[{"numeric":["=",3.018e2]}]}]},
				"news":{"newsProviders":["p1","p2"],"$or":[{"newCondition1":["news111"]},{"newCondition2":["news222"]}]}}`,
			match: []string{orEvent}},
		{source: "JsonRuleCompiler.parseObject: a field named like an operator",
			pattern: `{"numeric":[1]}`, match: []string{`{"numeric":1}`}, noMatch: []string{`{"numeric":2}`}},
	})
}

const orEvent = `{"detail":{"detail-type":"EC2 Instance State-change Notification",
	"resources":"arn:aws:ec2:us-east-1:123456789012:instance/i-000000aaaaaa00000",
	"info":{"state-status":"running","state-count":{"count":100}},"c-count":1,"d-count":8},
	"news":{"newsProviders":"p1","newCondition1":"news111","newCondition2":"news222"}}`

// TestRulerDifferences pins the differences with event-ruler that this package keeps (docs/ARCHITECTURE.md, "Event
// patterns and transformers").
func TestRulerDifferences(t *testing.T) {
	t.Parallel()
	runRulerCases(t, []rulerCase{
		// event-ruler compares an operand character by UTF-16 unit, so that a character beyond U+FFFF becomes two
		// unpaired surrogates, encoded as "??", and matches neither itself nor its other case. quamina's
		// TestHungarianMono (Old Hungarian, U+10C80 and U+10CC0) is followed.
		ignoreCase("quamina TestHungarianMono", "equals-ignore-case", "\U00010c80\U00010c9d\U00010c95\U00010c8b",
			caseMixes("\U00010c80\U00010c9d\U00010c95\U00010c8b", "\U00010cc0\U00010cdd\U00010cd5\U00010ccb"),
			[]string{"????????"}),
		// event-ruler gives a character only its lower and upper case: the title-case "ǅ" (lower "ǆ", upper "Ǆ")
		// would not match itself. It does here.
		ignoreCase("EqualsIgnoreCaseParser: title case", "equals-ignore-case", "\u01c5",
			[]string{"\u01c5", "\u01c6", "\u01c4"}, []string{"D\u017e", "dz"}),
		// event-ruler takes the lower bound first ("Too many elements in numeric expression" otherwise); the
		// order is free here, as in earlier releases of this package.
		{source: "JsonRuleCompilerTest.testNumericExpressions: upper bound first",
			pattern: `{"x":[{"numeric":["<",1,">",0]}]}`, match: []string{`{"x":0.5}`}, noMatch: []string{`{"x":1}`}},
		// event-ruler refuses numbers a double does not hold exactly in numeric and anything-but ("Cannot compare
		// number"); here numeric compares their doubles and anything-but their exact value beyond 2^53.
		{source: "ComparableNumber.generate: a number beyond 2^53",
			pattern: `{"x":[{"numeric":["=",9007199254740993]}]}`, match: []string{`{"x":9007199254740992}`}},
	})
	// event-ruler accepts an exact value that underflows and compares it by its text; it is refused here, as a
	// value out of range is.
	if _, err := Compile([]byte(`{"x":[1e-400]}`)); err == nil || !strings.Contains(err.Error(), "too small") {
		t.Errorf("Compile of an exact 1e-400 = %v, want an error", err)
	}
}
