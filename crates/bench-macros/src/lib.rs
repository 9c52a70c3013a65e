//! `#[latlab_bench::bench]`: registers a function as a benchmark of the `latlab-bench`
//! harness. See that crate for the forms a benchmark takes; this crate only writes the
//! registration.

#![forbid(unsafe_code)]

use proc_macro::TokenStream;
use proc_macro2::Span;
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Expr, FnArg, ItemFn, LitStr, Token, Type};

/// Registers a function as a benchmark.
///
/// Options: `args = [..]` (one benchmark per value, passed as the last parameter),
/// `types = [..]` (a generic function with one type parameter: one benchmark per type,
/// named `NAME/TYPE`, before the argument where there are both), `threads = [1, 2, 4]`
/// (the benchmark run on that many threads at once, named `NAME/threads:N` after its
/// argument), `group = "name"`
/// (default: the module the function is in), `name = "name"` (default: the function's),
/// `baseline` (the one the group's other benchmarks are compared with).
#[proc_macro_attribute]
pub fn bench(attr: TokenStream, item: TokenStream) -> TokenStream {
    let options = syn::parse_macro_input!(attr as Options);
    let function = syn::parse_macro_input!(item as ItemFn);
    match expand(options, function) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}

#[derive(Default)]
struct Options {
    args: Option<Expr>,
    types: Vec<Type>,
    threads: Option<Expr>,
    group: Option<LitStr>,
    name: Option<LitStr>,
    baseline: bool,
}

impl Parse for Options {
    fn parse(input: ParseStream) -> syn::Result<Options> {
        let mut options = Options::default();
        let items = Punctuated::<OptionItem, Token![,]>::parse_terminated(input)?;
        for item in items {
            match item {
                OptionItem::Args(expr) => options.args = Some(expr),
                OptionItem::Types(types) => options.types = types,
                OptionItem::Threads(threads) => options.threads = Some(threads),
                OptionItem::Group(group) => options.group = Some(group),
                OptionItem::Name(name) => options.name = Some(name),
                OptionItem::Baseline => options.baseline = true,
            }
        }
        Ok(options)
    }
}

enum OptionItem {
    Args(Expr),
    Types(Vec<Type>),
    Threads(Expr),
    Group(LitStr),
    Name(LitStr),
    Baseline,
}

impl Parse for OptionItem {
    fn parse(input: ParseStream) -> syn::Result<OptionItem> {
        let key: syn::Ident = input.parse()?;
        match key.to_string().as_str() {
            "baseline" => Ok(OptionItem::Baseline),
            "args" => {
                input.parse::<Token![=]>()?;
                Ok(OptionItem::Args(input.parse()?))
            }
            "types" => {
                input.parse::<Token![=]>()?;
                let list;
                syn::bracketed!(list in input);
                let types = Punctuated::<Type, Token![,]>::parse_terminated(&list)?;
                if types.is_empty() {
                    return Err(syn::Error::new(key.span(), "types = [..] names no type"));
                }
                Ok(OptionItem::Types(types.into_iter().collect()))
            }
            "threads" => {
                input.parse::<Token![=]>()?;
                Ok(OptionItem::Threads(input.parse()?))
            }
            "group" => {
                input.parse::<Token![=]>()?;
                Ok(OptionItem::Group(input.parse()?))
            }
            "name" => {
                input.parse::<Token![=]>()?;
                Ok(OptionItem::Name(input.parse()?))
            }
            other => Err(syn::Error::new(
                key.span(),
                format!(
                    "unknown #[bench] option `{other}`: expected args = [..], types = [..], \
                     threads = [..], group = \"..\", name = \"..\" or baseline"
                ),
            )),
        }
    }
}

/// Whether a parameter's type is the harness's `Bencher` (by its last path segment).
fn is_bencher(argument: &FnArg) -> bool {
    let FnArg::Typed(typed) = argument else {
        return false;
    };
    matches!(&*typed.ty, Type::Path(path)
        if path.path.segments.last().is_some_and(|s| s.ident == "Bencher"))
}

fn is_reference(argument: &FnArg) -> bool {
    matches!(argument, FnArg::Typed(typed) if matches!(&*typed.ty, Type::Reference(_)))
}

fn expand(options: Options, function: ItemFn) -> syn::Result<proc_macro2::TokenStream> {
    let signature = &function.sig;
    let generic = signature.generics.type_params().count();
    if options.types.is_empty() && !signature.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &signature.generics,
            "a generic #[bench] function needs `types = [..]`: one benchmark per type",
        ));
    }
    if !options.types.is_empty() && (generic != 1 || signature.generics.params.len() != 1) {
        return Err(syn::Error::new_spanned(
            &signature.ident,
            "`types = [..]` needs a function with exactly one type parameter",
        ));
    }
    let inputs: Vec<&FnArg> = signature.inputs.iter().collect();
    let takes_bencher = inputs.first().is_some_and(|a| is_bencher(a));
    let arg_param = inputs.get(usize::from(takes_bencher)).copied();
    if inputs.len() > usize::from(takes_bencher) + 1 {
        return Err(syn::Error::new_spanned(
            &signature.inputs,
            "a #[bench] function takes at most a Bencher and one argument",
        ));
    }
    if arg_param.is_some() != options.args.is_some() {
        return Err(syn::Error::new_spanned(
            &signature.inputs,
            "a parameter besides the Bencher needs `args = [..]`, and `args` needs one",
        ));
    }
    let name =
        (options.name.as_ref().map(LitStr::value)).unwrap_or_else(|| signature.ident.to_string());
    let registrations: Vec<proc_macro2::TokenStream> = if options.types.is_empty() {
        vec![registration(
            &options,
            &function,
            arg_param,
            takes_bencher,
            None,
            &name,
            0,
        )]
    } else {
        (options.types.iter().enumerate())
            .map(|(i, ty)| {
                // `Vec < u8 >` as written in the name: `Vec<u8>`.
                let label = quote!(#ty).to_string().replace(' ', "");
                let name = format!("{name}/{label}");
                registration(
                    &options,
                    &function,
                    arg_param,
                    takes_bencher,
                    Some(ty),
                    &name,
                    i,
                )
            })
            .collect()
    };
    Ok(quote! {
        #function
        #(#registrations)*
    })
}

/// The registration of one benchmark function: `name`, called with the type `ty` where it
/// is generic; `index` keeps the statics of one function's types apart.
fn registration(
    options: &Options,
    function: &ItemFn,
    arg_param: Option<&FnArg>,
    takes_bencher: bool,
    ty: Option<&Type>,
    name: &str,
    index: usize,
) -> proc_macro2::TokenStream {
    let ident = &function.sig.ident;
    let private = quote!(::latlab_bench::__private);
    let call = call_of(&function.sig.ident, arg_param, takes_bencher, ty);
    let (arg_labels, run) = arguments_and_run(options, &call);
    let name = LitStr::new(name, Span::call_site());
    let group = match &options.group {
        Some(group) => quote!(::core::option::Option::Some(#group)),
        None => quote!(::core::option::Option::None),
    };
    let baseline = options.baseline;
    let threads = match &options.threads {
        Some(threads) => quote!(&#threads),
        None => quote!(&[]),
    };
    let registration = format_ident!(
        "__LATLAB_BENCH_{}_{index}",
        ident.to_string().to_uppercase()
    );
    let keeper = format_ident!("__LATLAB_KEEP_{}_{index}", ident.to_string().to_uppercase());
    let kept_by_mingw = kept_by_mingw(&keeper, &registration);
    quote! {
        #kept_by_mingw

        #[#private::linkme::distributed_slice(#private::BENCHMARKS)]
        #[linkme(crate = #private::linkme)]
        #[doc(hidden)]
        static #registration: #private::Entry = #private::Entry {
            name: #name,
            group: #group,
            module: ::core::module_path!(),
            file: ::core::file!(),
            line: ::core::line!(),
            ordinal: #index,
            baseline: #baseline,
            threads: #threads,
            arg_labels: #arg_labels,
            run: #run,
        };
    }
}

/// The call of the benchmark function `ident` (at type `ty`, if generic) with its argument
/// (borrowed, or cloned for a parameter taken by value): handed the bencher, or timed by
/// it as a closure.
fn call_of(
    ident: &syn::Ident,
    arg_param: Option<&FnArg>,
    takes_bencher: bool,
    ty: Option<&Type>,
) -> proc_macro2::TokenStream {
    let argument = match arg_param {
        Some(param) if is_reference(param) => quote!(__latlab_arg),
        Some(_) => quote!(::core::clone::Clone::clone(__latlab_arg)),
        None => quote!(),
    };
    let callee = match ty {
        Some(ty) => quote!(#ident::<#ty>),
        None => quote!(#ident),
    };
    if takes_bencher {
        quote!(#callee(__latlab_bencher, #argument))
    } else {
        quote!(__latlab_bencher.bench(move || #callee(#argument)))
    }
}

/// The registration's `arg_labels` (each argument as text) and `run` (the `call` with the
/// argument at an index): none and the call alone for a benchmark without `args`.
fn arguments_and_run(
    options: &Options,
    call: &proc_macro2::TokenStream,
) -> (proc_macro2::TokenStream, proc_macro2::TokenStream) {
    match &options.args {
        Some(args) => (
            quote!(|| {
                let __latlab_args = #args;
                ::core::iter::IntoIterator::into_iter(&__latlab_args)
                    .map(|__latlab_arg| ::std::string::ToString::to_string(__latlab_arg))
                    .collect()
            }),
            quote!(|__latlab_bencher, __latlab_index| {
                let __latlab_args = #args;
                let __latlab_arg = ::core::iter::IntoIterator::into_iter(&__latlab_args)
                    .nth(__latlab_index)
                    .expect("an argument of this benchmark");
                #call
            }),
        ),
        None => (
            quote!(::std::vec::Vec::new),
            quote!(|__latlab_bencher, _| { #call }),
        ),
    }
}

/// MinGW's linker (`--gc-sections`) drops a section nothing refers to, and nothing refers
/// to a registration but its place in the slice: a constructor entry (`.CRT$XCU`, which
/// that linker always keeps) named `keeper` refers to `registration`, and so keeps it.
fn kept_by_mingw(keeper: &syn::Ident, registration: &syn::Ident) -> proc_macro2::TokenStream {
    quote! {
        #[cfg(all(target_os = "windows", target_env = "gnu"))]
        #[used]
        #[unsafe(link_section = ".CRT$XCU")]
        #[doc(hidden)]
        static #keeper: extern "C" fn() = {
            extern "C" fn keep() {
                ::core::hint::black_box(&#registration);
            }
            keep
        };
    }
}
