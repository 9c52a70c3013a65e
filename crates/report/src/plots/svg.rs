//! The one way every figure is written (a probe's declared curves, a comparison's ratios,
//! the fleet's strips, CPU-pair matrices, distributions): SVG element by element, every
//! attribute value and every text escaped here, once, so that a name from a results file (a
//! host, a CPU model, a benchmark) can never become markup.

use std::fmt::{Display, Write as _};

/// An SVG document being written.
pub(crate) struct Svg {
    out: String,
}

/// One element being written: its attributes, then its text and children; it lands in the
/// document when [`Element::add`] is called.
#[must_use = "an element is written only when added"]
pub(crate) struct Element<'a> {
    svg: &'a mut Svg,
    name: &'static str,
    attributes: String,
    body: String,
}

impl Svg {
    /// A document whose `<svg>` element has `attributes` (the namespace is the caller's to
    /// give where the figure is a file of its own).
    pub fn open(attributes: &[(&str, &dyn Display)]) -> Svg {
        let mut out = String::from("<svg");
        for (name, value) in attributes {
            push_attribute(&mut out, name, value);
        }
        out.push('>');
        Svg { out }
    }

    /// A figure of its own, `width` by `height` pixels: the SVG namespace, its size and a
    /// view box of that size, then the `more` attributes.
    pub fn sized(width: f64, height: f64, more: &[(&str, &dyn Display)]) -> Svg {
        let view_box = format!("0 0 {width} {height}");
        let sized: [(&str, &dyn Display); 4] = [
            ("xmlns", &"http://www.w3.org/2000/svg"),
            ("width", &width),
            ("height", &height),
            ("viewBox", &view_box),
        ];
        Svg::open(&[&sized[..], more].concat())
    }

    /// A figure inline in a page, `width` by `height` pixels and scaling down to its
    /// container, labelled `label` for a screen reader, with `heading` in bold at its top
    /// left (the fleet's strips, the history's timelines).
    pub fn headed(width: f64, height: f64, label: &str, heading: &str) -> Svg {
        let mut svg = Svg::open(&[
            ("viewBox", &format!("0 0 {width} {height}")),
            ("width", &width),
            ("role", &"img"),
            ("aria-label", &label),
            ("style", &"max-width:100%;height:auto"),
        ]);
        (svg.element("text").attr("x", 0))
            .attr("y", 14)
            .attr("font-size", 13)
            .attr("font-weight", "bold")
            .text(heading)
            .add();
        svg
    }

    /// An element to add to the document.
    pub fn element(&mut self, name: &'static str) -> Element<'_> {
        Element {
            svg: self,
            name,
            attributes: String::new(),
            body: String::new(),
        }
    }

    /// The document's `<title>`: what a screen reader says and a tooltip shows.
    pub fn title(&mut self, text: &str) {
        let _ = write!(self.out, "<title>{}</title>", escape(text));
    }

    /// The document, its `<svg>` element closed.
    pub fn finish(mut self) -> String {
        self.out.push_str("</svg>");
        self.out
    }
}

impl Element<'_> {
    /// An attribute, its value escaped.
    pub fn attr(mut self, name: &str, value: impl Display) -> Self {
        push_attribute(&mut self.attributes, name, &value);
        self
    }

    /// An attribute given only when there is a value.
    pub fn attr_if(self, name: &str, value: Option<impl Display>) -> Self {
        match value {
            Some(value) => self.attr(name, value),
            None => self,
        }
    }

    /// Text inside the element, escaped.
    pub fn text(mut self, text: impl Display) -> Self {
        self.body.push_str(&escape(&text.to_string()));
        self
    }

    /// A `<title>` inside the element: its tooltip.
    pub fn title(mut self, text: impl Display) -> Self {
        let _ = write!(self.body, "<title>{}</title>", escape(&text.to_string()));
        self
    }

    /// Writes the element into the document: `<name …/>` when it holds nothing.
    pub fn add(self) {
        let out = &mut self.svg.out;
        let _ = write!(out, "<{}{}", self.name, self.attributes);
        if self.body.is_empty() {
            out.push_str("/>");
        } else {
            let _ = write!(out, ">{}</{}>", self.body, self.name);
        }
    }
}

fn push_attribute(out: &mut String, name: &str, value: &dyn Display) {
    let _ = write!(out, " {name}=\"{}\"", escape(&value.to_string()));
}

/// A coordinate to a tenth of a pixel, as the figures write them.
pub(crate) fn px(value: f64) -> String {
    format!("{value:.1}")
}

/// Escapes text for SVG (XML text and attribute values).
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The least and the greatest of `values`; `None` where there are none.
pub(crate) fn range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |range, v| {
        Some(range.map_or((v, v), |(low, high): (f64, f64)| (low.min(v), high.max(v))))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Attribute values and text are escaped, whatever they hold; an empty element closes
    /// itself, one with text or a title holds them in order.
    #[test]
    fn every_value_and_text_is_escaped_once() {
        let mut svg = Svg::open(&[("width", &720), ("aria-label", &"a \"b\" <c>")]);
        svg.title("x & y");
        svg.element("line").attr("x1", px(1.26)).add();
        svg.element("text")
            .attr("fill", "#c62828")
            .text("<script>")
            .title("p&q")
            .add();
        assert_eq!(
            svg.finish(),
            "<svg width=\"720\" aria-label=\"a &quot;b&quot; &lt;c&gt;\">\
             <title>x &amp; y</title><line x1=\"1.3\"/>\
             <text fill=\"#c62828\">&lt;script&gt;<title>p&amp;q</title></text></svg>"
        );
    }
}
