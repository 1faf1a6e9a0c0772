//! Element names the extractor distinguishes, and their HTML categories.

macro_rules! tags {
    ($($v:ident = $s:literal),* $(,)?) => {
        /// Element names the extractor distinguishes.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Tag { $($v,)* Other }
        impl Tag {
            pub(crate) fn from_name(n: &str) -> Tag {
                match n { $($s => Tag::$v,)* _ => Tag::Other }
            }
        }
    };
}

tags! {
    Html = "html", Head = "head", Body = "body", Title = "title", Meta = "meta", Link = "link",
    Base = "base", Script = "script", Style = "style", Noscript = "noscript", Template = "template",
    Svg = "svg", Math = "math", Iframe = "iframe", Object = "object", Embed = "embed", Canvas = "canvas",
    Form = "form", Input = "input", Select = "select", Option = "option", Textarea = "textarea",
    Button = "button", Label = "label", Fieldset = "fieldset", Dialog = "dialog",
    Nav = "nav", Header = "header", Footer = "footer", Aside = "aside", Main = "main",
    Article = "article", Section = "section", Div = "div", P = "p", Span = "span",
    H1 = "h1", H2 = "h2", H3 = "h3", H4 = "h4", H5 = "h5", H6 = "h6",
    Ul = "ul", Ol = "ol", Li = "li", Dl = "dl", Dt = "dt", Dd = "dd", Menu = "menu",
    Table = "table", Caption = "caption", Thead = "thead", Tbody = "tbody", Tfoot = "tfoot",
    Tr = "tr", Td = "td", Th = "th", Colgroup = "colgroup", Col = "col",
    Pre = "pre", Code = "code", Kbd = "kbd", Samp = "samp", Tt = "tt", Blockquote = "blockquote",
    A = "a", Area = "area", Img = "img", Picture = "picture", Source = "source", Figure = "figure",
    Figcaption = "figcaption", Br = "br", Hr = "hr", Wbr = "wbr", B = "b", Strong = "strong",
    I = "i", Em = "em", Address = "address", Details = "details", Summary = "summary",
    Video = "video", Audio = "audio", Track = "track", Param = "param", Center = "center",
    Font = "font", Small = "small", Sup = "sup", Sub = "sub", Time = "time", Abbr = "abbr",
    Cite = "cite", Q = "q", Mark = "mark", U = "u", S = "s", Del = "del", Ins = "ins",
    Strike = "strike",
    // MathML, for a formula's TeX (`markdown::math_tex`).
    Mrow = "mrow", Mstyle = "mstyle", Mi = "mi", Mn = "mn", Mo = "mo", Mtext = "mtext", Ms = "ms", Mspace = "mspace",
    Msup = "msup", Msub = "msub", Msubsup = "msubsup", Munder = "munder", Mover = "mover",
    Munderover = "munderover", Mfrac = "mfrac", Msqrt = "msqrt", Mroot = "mroot",
    Mtable = "mtable", Mtr = "mtr", Mtd = "mtd", Semantics = "semantics",
    Annotation = "annotation", AnnotationXml = "annotation-xml", Mphantom = "mphantom",
}

impl Tag {
    /// MathML's elements (foreign content: `/>` closes them).
    pub(crate) fn is_mathml(self) -> bool {
        matches!(
            self,
            Tag::Math
                | Tag::Mrow
                | Tag::Mstyle
                | Tag::Mi
                | Tag::Mn
                | Tag::Mo
                | Tag::Mtext
                | Tag::Ms
                | Tag::Mspace
                | Tag::Msup
                | Tag::Msub
                | Tag::Msubsup
                | Tag::Munder
                | Tag::Mover
                | Tag::Munderover
                | Tag::Mfrac
                | Tag::Msqrt
                | Tag::Mroot
                | Tag::Mtable
                | Tag::Mtr
                | Tag::Mtd
                | Tag::Semantics
                | Tag::Annotation
                | Tag::AnnotationXml
                | Tag::Mphantom
        )
    }
    pub(crate) fn is_void(self) -> bool {
        matches!(
            self,
            Tag::Area
                | Tag::Base
                | Tag::Br
                | Tag::Col
                | Tag::Embed
                | Tag::Hr
                | Tag::Img
                | Tag::Input
                | Tag::Link
                | Tag::Meta
                | Tag::Param
                | Tag::Source
                | Tag::Track
                | Tag::Wbr
        )
    }
    /// Subtrees never rendered, whatever the options.
    pub(crate) fn is_dropped(self) -> bool {
        matches!(
            self,
            Tag::Script
                | Tag::Style
                | Tag::Template
                | Tag::Svg
                | Tag::AnnotationXml
                | Tag::Mphantom
                | Tag::Iframe
                | Tag::Object
                | Tag::Embed
                | Tag::Canvas
                | Tag::Select
                | Tag::Textarea
                | Tag::Button
                | Tag::Input
                | Tag::Title
                | Tag::Head
                | Tag::Dialog
                | Tag::Video
                | Tag::Audio
        )
    }
    /// Elements that close an open `<p>`.
    pub(crate) fn closes_p(self) -> bool {
        matches!(
            self,
            Tag::Address
                | Tag::Article
                | Tag::Aside
                | Tag::Blockquote
                | Tag::Details
                | Tag::Div
                | Tag::Dl
                | Tag::Fieldset
                | Tag::Figcaption
                | Tag::Figure
                | Tag::Footer
                | Tag::Form
                | Tag::H1
                | Tag::H2
                | Tag::H3
                | Tag::H4
                | Tag::H5
                | Tag::H6
                | Tag::Header
                | Tag::Hr
                | Tag::Main
                | Tag::Menu
                | Tag::Nav
                | Tag::Ol
                | Tag::P
                | Tag::Pre
                | Tag::Section
                | Tag::Table
                | Tag::Ul
                | Tag::Center
        )
    }
    /// A heading's level (1 for `<h1>` … 6 for `<h6>`); `None` for other tags.
    pub(crate) fn heading_level(self) -> Option<u8> {
        match self {
            Tag::H1 => Some(1),
            Tag::H2 => Some(2),
            Tag::H3 => Some(3),
            Tag::H4 => Some(4),
            Tag::H5 => Some(5),
            Tag::H6 => Some(6),
            _ => None,
        }
    }
    pub(crate) fn is_heading(self) -> bool {
        matches!(
            self,
            Tag::H1 | Tag::H2 | Tag::H3 | Tag::H4 | Tag::H5 | Tag::H6
        )
    }
    /// Block-level for markdown purposes.
    pub(crate) fn is_block(self) -> bool {
        self.closes_p()
            || matches!(
                self,
                Tag::Li
                    | Tag::Dt
                    | Tag::Dd
                    | Tag::Tr
                    | Tag::Td
                    | Tag::Th
                    | Tag::Caption
                    | Tag::Body
                    | Tag::Html
                    | Tag::Noscript
                    | Tag::Thead
                    | Tag::Tbody
                    | Tag::Tfoot
                    | Tag::Summary
                    | Tag::Br
                    | Tag::Option
                    | Tag::Label
            )
    }
}
